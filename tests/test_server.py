"""The HTTP API against a real uvicorn server on loopback: every endpoint, limits and errors."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ragwright import Index, SearchRequest
from ragwright.server import ServerSettings
from ragwright.server.problems import ApiError
from ragwright.server.uploads import check_filename
from server_helpers import GUIDE, build_index, serve, serve_logged, sse_events


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    with build_index(tmp_path) as index:
        yield index


@pytest.fixture
def client(index: Index) -> Iterator[httpx.Client]:
    with serve(index) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def error_code(response: httpx.Response) -> str:
    code: str = response.json()["error"]["code"]
    return code


# -- search ---------------------------------------------------------------------------------


def test_search_returns_ranked_hits_with_spans_and_marks_text_untrusted(
    client: httpx.Client, index: Index
) -> None:
    response = client.post("/v1/search", json={"query": "install on linux", "top_k": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["content_trust"] == "untrusted"
    assert body["mode"] == "hybrid" and body["top_k"] == 3
    top = body["hits"][0]
    assert top["rank"] == 1 and top["source"] == "docs/guide.md"
    assert top["breadcrumb"] == "Guide > Install"
    document = index.document(top["document_id"])
    assert document is not None
    assert document.content[top["char_start"] : top["char_end"]] == top["text"]


def test_search_modes_and_filters(client: httpx.Client) -> None:
    bm25 = client.post("/v1/search", json={"query": "streaming answers", "mode": "bm25"})
    assert bm25.status_code == 200
    assert {hit["arms"][0] for hit in bm25.json()["hits"]} == {"bm25"}
    assert bm25.json()["hits"][0]["source"] == "docs/notes.txt"
    filtered = client.post(
        "/v1/search", json={"query": "install", "filter": 'source = "docs/notes.txt"'}
    )
    assert filtered.status_code == 200
    assert {hit["source"] for hit in filtered.json()["hits"]} == {"docs/notes.txt"}
    assert filtered.json()["filter"] == 'source = "docs/notes.txt"'


def test_search_takes_the_fusion_settings_over_the_search_table(index: Index) -> None:
    """A field left out takes the server's [search] default; a field sent wins over it, and the
    result is what `Index.search` gives with the same request."""
    tuned = SearchRequest(fusion="rrf", rrf_k=1, vector_weight=0.0, top_k=4)
    defaults = ServerSettings(search=tuned)
    with serve(index, defaults) as url, httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/v1/search", json={"query": "install on linux"})
        ids = [hit["chunk_id"] for hit in response.json()["hits"]]
        assert ids == [hit.chunk.id for hit in index.search("install on linux", tuned)]
        body = {"query": "install on linux", "fusion": "convex", "vector_weight": 1.0}
        response = client.post("/v1/search", json=body)
        ids = [hit["chunk_id"] for hit in response.json()["hits"]]
        convex = tuned.but(fusion="convex", vector_weight=1.0)
        assert ids == [hit.chunk.id for hit in index.search("install on linux", convex)]
        body = {"query": "install on linux", "mode": "bm25", "bm25_k1": 2.0, "bm25_b": 0.0}
        response = client.post("/v1/search", json=body)
        scores = [hit["score"] for hit in response.json()["hits"]]
        flat = tuned.with_settings({"mode": "bm25", "bm25_k1": 2.0, "bm25_b": 0.0})
        assert scores == [hit.score for hit in index.search("install on linux", flat)]
        fts5 = tuned.but(mode="bm25")
        assert scores != [hit.score for hit in index.search("install on linux", fts5)]


@pytest.mark.parametrize(
    "body",
    [
        {"query": "x" * 4097},
        {"query": ""},
        {"query": "install", "top_k": 0},
        {"query": "install", "top_k": 101},
        {"query": "install", "mode": "fuzzy"},
        {"query": "install", "unknown": 1},
        {"top_k": 3},
        {"query": "install", "fusion": "max"},
        {"query": "install", "rrf_k": 0},
        {"query": "install", "bm25_weight": -1},
        {"query": "install", "vector_weight": "heavy"},
        {"query": "install", "arm_depth": -1},
        {"query": "install", "bm25_b": 1.5},
        {"query": "install", "bm25_k1": -0.5},
    ],
)
def test_search_arguments_out_of_bounds_are_422(
    client: httpx.Client, body: dict[str, object]
) -> None:
    response = client.post("/v1/search", json=body)
    assert response.status_code == 422
    assert error_code(response) == "invalid_request"
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"question": "x" * 4097},
        {"question": ""},
        {"question": "install", "top_k": 0},
        {"question": "install", "top_k": 21},  # the MCP ask tool's bound too
        {"question": "install", "engine": "magic"},
        {"question": "install", "unknown": 1},
    ],
)
def test_ask_arguments_out_of_bounds_are_422(client: httpx.Client, body: dict[str, object]) -> None:
    response = client.post("/v1/ask", json=body)
    assert response.status_code == 422
    assert error_code(response) == "invalid_request"


def test_ask_takes_up_to_twenty_chunks(client: httpx.Client) -> None:
    response = client.post("/v1/ask", json={"question": "install", "top_k": 20})
    assert response.status_code == 200 and response.json()["found"]


def test_ragwright_errors_map_to_http_statuses(client: httpx.Client) -> None:
    bad_filter = client.post("/v1/search", json={"query": "install", "filter": "source ="})
    assert bad_filter.status_code == 400 and error_code(bad_filter) == "filter_syntax"
    assert "position" in bad_filter.json()["error"]["message"]
    threshold = client.post("/v1/search", json={"query": "install", "min_score": 0.5})
    assert threshold.status_code == 400 and error_code(threshold) == "unsupported_scale"
    not_json = client.post("/v1/search", content=b"{", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422 and error_code(not_json) == "invalid_request"
    missing = client.get("/v1/nothing-here")
    assert missing.status_code == 404 and error_code(missing) == "not_found"


# -- ask ------------------------------------------------------------------------------------


def test_ask_returns_an_answer_whose_citations_are_exact_spans(
    client: httpx.Client, index: Index
) -> None:
    response = client.post("/v1/ask", json={"question": "How do I install it on Linux?"})
    assert response.status_code == 200
    body = response.json()
    assert body["found"] and body["citations"] and body["content_trust"] == "untrusted"
    for citation in body["citations"]:
        assert f"[{citation['number']}]" in body["answer"]
        document = index.document(citation["document_id"])
        assert document is not None
        assert document.content[citation["char_start"] : citation["char_end"]] == citation["quote"]


@pytest.mark.parametrize("ask_for_stream", ["body", "accept"])
def test_ask_streams_server_sent_events(client: httpx.Client, ask_for_stream: str) -> None:
    question = {"question": "How do I install it on Linux?"}
    if ask_for_stream == "body":
        request = client.build_request("POST", "/v1/ask", json={**question, "stream": True})
    else:
        request = client.build_request(
            "POST", "/v1/ask", json=question, headers={"Accept": "text/event-stream"}
        )
    response = client.send(request)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[-2:] == ["answer", "done"] and set(names[:-2]) == {"delta"}
    answer = events[-2][1]
    assert "".join(data["text"] for name, data in events if name == "delta") == answer["answer"]
    assert answer["citations"] and answer["question"] == question["question"]


def test_ask_stream_with_a_bad_filter_is_an_http_error_not_a_stream(client: httpx.Client) -> None:
    response = client.post("/v1/ask", json={"question": "install", "filter": "(", "stream": True})
    assert response.status_code == 400
    assert error_code(response) == "filter_syntax"


# -- documents ------------------------------------------------------------------------------


def upload(client: httpx.Client, *files: tuple[str, bytes]) -> httpx.Response:
    return client.post("/v1/documents", files=[("files", (n, d, "text/plain")) for n, d in files])


def test_upload_ingests_under_uploads_and_is_idempotent(client: httpx.Client) -> None:
    first = upload(client, ("faq.md", b"# FAQ\n\nQuokkas live on Rottnest Island.\n"))
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["added"] == ["uploads/faq.md"] and body["chunks_written"] >= 1
    [entry] = body["documents"]
    assert entry["source"] == "uploads/faq.md" and entry["status"] == "added"

    again = upload(client, ("faq.md", b"# FAQ\n\nQuokkas live on Rottnest Island.\n"))
    assert again.json()["unchanged"] == ["uploads/faq.md"]
    assert again.json()["chunks_written"] == 0

    changed = upload(client, ("faq.md", b"# FAQ\n\nWombats dig burrows.\n"))
    assert changed.json()["updated"] == ["uploads/faq.md"]
    hits = client.post("/v1/search", json={"query": "quokkas rottnest", "mode": "bm25"})
    assert hits.json()["hits"] == []  # the old text is gone
    wombats = client.post("/v1/search", json={"query": "wombats", "mode": "bm25"})
    assert wombats.json()["hits"][0]["source"] == "uploads/faq.md"


def test_get_list_and_delete_documents(client: httpx.Client) -> None:
    listed = client.get("/v1/documents").json()["documents"]
    assert [d["source"] for d in listed] == ["docs/guide.md", "docs/notes.txt"]
    guide = listed[0]
    by_id = client.get(f"/v1/documents/{guide['id']}")
    by_source = client.get("/v1/documents/docs/guide.md")
    assert by_id.status_code == by_source.status_code == 200
    assert by_id.json() == by_source.json()
    document = by_id.json()
    assert document["content"].startswith("# Guide") and document["content_trust"] == "untrusted"
    for chunk in document["chunks"]:
        fetched = client.get(f"/v1/chunks/{chunk['id']}").json()
        assert fetched["text"] == document["content"][chunk["char_start"] : chunk["char_end"]]
        assert fetched["source"] == "docs/guide.md"

    filtered = client.get("/v1/documents", params={"filter": 'source = "docs/notes.txt"'})
    assert [d["source"] for d in filtered.json()["documents"]] == ["docs/notes.txt"]
    bad = client.get("/v1/documents", params={"filter": "source = "})
    assert bad.status_code == 400 and error_code(bad) == "filter_syntax"

    deleted = client.delete(f"/v1/documents/{guide['id']}")
    assert deleted.status_code == 200 and deleted.json()["source"] == "docs/guide.md"
    assert client.get(f"/v1/documents/{guide['id']}").status_code == 404
    assert client.delete(f"/v1/documents/{guide['id']}").status_code == 404
    gone = client.get(f"/v1/chunks/{document['chunks'][0]['id']}")
    assert gone.status_code == 404 and error_code(gone) == "not_found"
    # The wording of `ragwright docs show` and the MCP get_chunk/get_document tools.
    assert gone.json()["error"]["message"] == f"no chunk with id {document['chunks'][0]['id']!r}"
    missing = client.get("/v1/documents/docs/none.md").json()["error"]["message"]
    assert missing == "no document with id or source 'docs/none.md'"
    assert client.get("/v1/stats").json()["documents"] == 1


def test_stats_and_health(client: httpx.Client) -> None:
    stats = client.get("/v1/stats").json()
    assert stats["documents"] == 2 and stats["chunks"] >= 2
    assert stats["embedding_space"]["model"] == "ragwright-hashing"
    assert client.get("/healthz").json()["status"] == "ok"


@pytest.mark.parametrize(
    "name", ["../evil.md", "a/b.md", "..", "dir\\file.md", "/etc/passwd", " spaced.md"]
)
def test_unsafe_upload_names_are_refused(client: httpx.Client, index: Index, name: str) -> None:
    response = upload(client, (name, b"text"))
    assert response.status_code == 400, response.text
    assert error_code(response) == "unsafe_filename"
    assert index.stats().documents == 2


@pytest.mark.parametrize("name", ["bad\nname.md", "nul\x00.md", "", "x" * 256 + ".md"])
def test_filenames_with_control_characters_or_bad_lengths_are_refused(name: str) -> None:
    # httpx escapes such names on the wire, so the check itself is tested here.
    with pytest.raises(ApiError) as raised:
        check_filename(name)
    assert raised.value.status == 400 and raised.value.code == "unsafe_filename"
    assert check_filename("Report (final) é.md") == "Report (final) é.md"


def test_failed_files_are_reported_and_the_rest_ingested(client: httpx.Client) -> None:
    mixed = upload(client, ("good.md", b"Good text.\n"), ("blob.bin", b"\x00\x01"))
    assert mixed.status_code == 200
    assert mixed.json()["added"] == ["uploads/good.md"]
    assert mixed.json()["failed"][0]["source"] == "uploads/blob.bin"
    no_files = client.post("/v1/documents", data={"files": "not a file"})
    assert no_files.status_code == 422 and error_code(no_files) == "invalid_request"
    empty = client.post("/v1/documents", json={})
    assert empty.status_code == 422 and "one or more files" in empty.json()["error"]["message"]
    only_bad = upload(client, ("blob.bin", b"\x00\x01"))
    assert only_bad.status_code == 422 and error_code(only_bad) == "ingest_failed"
    assert only_bad.json()["failed"][0]["reason"] == "no parser for this file type"


# -- limits ---------------------------------------------------------------------------------


@pytest.fixture
def strict(index: Index) -> Iterator[httpx.Client]:
    settings = ServerSettings(
        max_request_bytes=2048, max_upload_bytes=8192, max_file_bytes=1000, max_files=2
    )
    with serve(index, settings) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def test_upload_limits(strict: httpx.Client, index: Index) -> None:
    too_big = upload(strict, ("big.txt", b"word " * 300))
    assert too_big.status_code == 413 and error_code(too_big) == "ingest_limit"
    assert "big.txt" in too_big.json()["error"]["message"]
    too_many = upload(strict, ("a.txt", b"a"), ("b.txt", b"b"), ("c.txt", b"c"))
    assert too_many.status_code == 413 and error_code(too_many) == "ingest_limit"
    request_too_big = upload(strict, ("a.txt", b"a" * 900), ("b.txt", b"b" * 9000))
    assert request_too_big.status_code == 413 and error_code(request_too_big) == "body_too_large"
    assert index.stats().documents == 2  # nothing was ingested


def test_json_body_limit_with_and_without_content_length(strict: httpx.Client) -> None:
    padded = '{"query": "install", "filter": null' + " " * 3000 + "}"
    declared = strict.post(
        "/v1/search", content=padded, headers={"Content-Type": "application/json"}
    )
    assert declared.status_code == 413 and error_code(declared) == "body_too_large"

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield padded[:1000].encode()
        yield padded[1000:].encode()

    streamed = strict.post(
        "/v1/search", content=chunked(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413 and error_code(streamed) == "body_too_large"
    small = strict.post("/v1/search", json={"query": "install"})
    assert small.status_code == 200


# -- concurrency, logs, mounts, web page ----------------------------------------------------


def test_searches_during_uploads_all_succeed_and_see_whole_documents(
    client: httpx.Client,
) -> None:
    # Each file is uploaded twice (added, then replaced by a new version) while three threads
    # search. Every hit must be an exact span of one whole version of its file.
    def version(number: int, round_: int) -> str:
        return "\n\n".join(
            f"Paragraph {i} of file {number} version {round_} has words." for i in range(60)
        )

    versions = {f"uploads/file{n}.txt": [version(n, r) for r in (1, 2)] for n in range(6)}
    failures: list[str] = []
    searches = 0
    stop = threading.Event()

    def search_loop() -> None:
        nonlocal searches
        while not stop.is_set():
            response = client.post("/v1/search", json={"query": "paragraph words", "top_k": 20})
            searches += 1
            if response.status_code != 200:
                failures.append(response.text)
                continue
            for hit in response.json()["hits"]:
                texts = versions.get(hit["source"])
                span = slice(hit["char_start"], hit["char_end"])
                if texts is not None and all(text[span] != hit["text"] for text in texts):
                    failures.append(f"{hit['source']} has a hit of no whole version")

    readers = [threading.Thread(target=search_loop) for _ in range(3)]
    for reader in readers:
        reader.start()
    try:
        for round_ in (0, 1):
            for source, texts in versions.items():
                response = upload(client, (source.removeprefix("uploads/"), texts[round_].encode()))
                assert response.status_code == 200, response.text
                assert response.json()["added" if round_ == 0 else "updated"] == [source]
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert failures == [] and searches > 0
    for source, texts in versions.items():
        document = client.get(f"/v1/documents/{source}").json()
        assert document["content"] == texts[1]


def test_one_json_log_line_per_request(index: Index) -> None:
    with serve_logged(index) as (url, records):
        httpx.post(f"{url}/v1/search?secret=1", json={"query": "install"})
        httpx.get(f"{url}/v1/documents/nope")
    lines = [
        getattr(r, "fields", {})
        for r in records
        if getattr(r, "fields", {}).get("event") == "request"
    ]
    assert [(f["method"], f["path"], f["status"]) for f in lines] == [
        ("POST", "/v1/search", 200),
        ("GET", "/v1/documents/nope", 404),
    ]
    assert all(f["duration_ms"] >= 0 and f["key"] is None for f in lines)


def test_mounted_apps_share_the_server_and_their_lifespan_runs(index: Index) -> None:
    started: list[str] = []

    async def hello(_: object) -> PlainTextResponse:
        return PlainTextResponse("hello from the mounted app")

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        started.append("up")
        yield

    extra = Starlette(routes=[Route("/", hello)], lifespan=lifespan)
    with serve(index, mounts={"/extra": extra}) as url:
        assert httpx.get(f"{url}/extra/").text == "hello from the mounted app"
    assert started == ["up"]


def test_web_page_and_openapi_are_served(client: httpx.Client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "<title>ragwright" in page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert client.get("/static/app.js").status_code == 200
    schema = client.get("/openapi.json").json()
    assert {"/v1/search", "/v1/ask", "/v1/documents", "/v1/stats", "/healthz"} <= set(
        schema["paths"]
    )
    assert (
        schema["components"]["schemas"]["SearchRequest"]["properties"]["query"]["maxLength"] == 4096
    )
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text
    assert "cdn" not in docs.text.lower() and "https://" not in docs.text  # served offline
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"):
        assert f"/docs-assets/{asset}" in docs.text
        assert client.get(f"/docs-assets/{asset}").status_code == 200
    redoc = client.get("/redoc")
    assert redoc.status_code == 200 and "/docs-assets/redoc.standalone.js" in redoc.text
    assert "https://" not in redoc.text


def test_upload_body_is_the_cli_report(client: httpx.Client) -> None:
    response = upload(client, ("guide.md", GUIDE.encode()))
    assert set(response.json()) == {
        "added", "updated", "unchanged", "removed", "failed", "skipped", "warnings",
        "chunks_written", "chunks_extracted", "documents",
    }  # fmt: skip
