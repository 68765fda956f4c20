"""The `Reader` port that the read surfaces are written once against: one index
(`IndexReader`) and a federation keep the same contract (the same hits from the same index,
lookups naming the member holding what they found, a restricted caller finding nothing it
may not read), and a federation's ``POST /v1/ask`` is the one-index route, so it honours the
body's mode as that route does."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragwright import Federation, Index
from ragwright.config import Config
from ragwright.permissions import Caller
from ragwright.pipeline.search.request import SearchRequest
from ragwright.reading import IndexReader, Reader
from ragwright.server import ServerSettings, create_federation_app
from ragwright.server.runner import running, server_for
from ragwright.testing import HashingEmbedder

RULES = {"permissions": [{"path": "vault/**", "principals": ["group:vault"]}]}
OUTSIDER = Caller.of("group:x")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("reader")
    docs = root / "docs"
    (docs / "vault").mkdir(parents=True)
    (docs / "open.md").write_text("The vault is in the cellar. Ask the porter.\n")
    (docs / "vault" / "code.md").write_text("The vault code is 4711. It opens at nine.\n")
    with Index(root / "kb", embedder=HashingEmbedder(), config=Config(RULES)) as index:
        index.ingestion.name_sources_from(docs)
        assert index.ingest(docs).ok
        yield index


@pytest.fixture(scope="module")
def federation(kb: Index) -> Iterator[Federation]:
    with Federation([("team", kb)], timeout=30) as federated:
        yield federated


@pytest.fixture(params=["index", "federation"])
def reader(request: pytest.FixtureRequest, kb: Index, federation: Federation) -> Reader:
    return IndexReader(kb) if request.param == "index" else federation


def member_of(reader: Reader) -> str | None:
    return None if isinstance(reader, IndexReader) else "team"


def test_find_gives_the_index_s_hits_with_its_route_or_warnings(reader: Reader, kb: Index) -> None:
    request = SearchRequest().but(mode="bm25", top_k=5)
    found = reader.find("vault code", request)
    assert [h.chunk.id for h in found.hits] == [
        h.chunk.id for h in kb.search("vault code", request)
    ]
    assert {hit.index for hit in found.hits} == {member_of(reader)}
    if isinstance(reader, IndexReader):  # one index: its route, nothing to leave out
        assert found.route is not None and found.route.mode == "bm25" and found.warnings is None
    else:  # each member plans its own route; none was left out
        assert found.route is None and found.warnings == ()


def test_lookups_name_the_member_holding_what_they_found(reader: Reader, kb: Index) -> None:
    document = kb.documents.get("open.md")
    assert document is not None
    chunk = kb.documents.chunks_of(document.id)[0]
    assert reader.chunk(chunk.id) == (member_of(reader), chunk)
    assert reader.document("open.md") == (member_of(reader), document)
    assert reader.chunks_of(document.id, member_of(reader)) == kb.documents.chunks_of(document.id)
    assert reader.chunks_of(document.id, None) == kb.documents.chunks_of(document.id)
    listed = [(name, info.source) for name, info in reader.documents()]
    assert listed == [(member_of(reader), "open.md"), (member_of(reader), "vault/code.md")]
    assert reader.chunk("no-such-chunk") is None and reader.document("nowhere.md") is None


def test_a_restricted_caller_finds_nothing_it_may_not_read(reader: Reader) -> None:
    found = reader.find("vault code", SearchRequest().but(mode="bm25", caller=OUTSIDER))
    assert [hit.source for hit in found.hits] == ["open.md"]
    assert reader.document("vault/code.md", caller=OUTSIDER) is None
    assert [info.source for _, info in reader.documents(caller=OUTSIDER)] == ["open.md"]
    assert "global" not in reader.modes_for(OUTSIDER) and "auto" in reader.modes_for(OUTSIDER)


def test_a_federation_s_ask_route_honours_the_body_s_mode(federation: Federation) -> None:
    settings = ServerSettings()
    app = create_federation_app(federation, settings, host="127.0.0.1")
    with running(server_for(app, "127.0.0.1", 0, settings, log_level="warning")) as url:
        body = {"question": "What is the vault code?", "mode": "graph"}
        refused = httpx.post(f"{url}/v1/ask", json=body, timeout=30)
        answered = httpx.post(f"{url}/v1/ask", json=body | {"mode": "bm25"}, timeout=30)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "graph_not_built"
    assert answered.status_code == 200 and answered.json()["citations"][0]["index"] == "team"
