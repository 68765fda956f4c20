"""Federated search on every surface: `ragwright search|ask --index A --index B`, the HTTP API
and the MCP tools over a ``[federation]`` table (in process, and `ragwright serve` / `ragwright
mcp` as real processes reading it). Every hit and citation names its index, and resolves there."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from cli_helpers import runner
from federation_helpers import FieldRefusingIndex, personal, team
from ragwright import Federation, Index
from ragwright.cli import app
from ragwright.config import Config
from ragwright.mcp_server import build_federation_server
from ragwright.server import ServerSettings, create_federation_app
from ragwright.server.runner import running, server_for
from ragwright.testing.openai_server import OpenAIServer, quoting_responder
from server_helpers import free_port, sse_events, wait_for

__all__ = ["personal", "team"]  # fixtures, used by name

QUESTION = "How often does key rotation happen for the keys?"


@pytest.fixture(autouse=True)
def _no_caller_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("RAGWRIGHT_CONFIG", "RAGWRIGHT_INDEX"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def both(team: Path, personal: str) -> Iterator[Federation]:
    # Answers quote every sentence within reach of the best: the tests check where each
    # quote's span is read, so both members must be quoted, whichever sentence wins.
    wide = Config({"answer": {"extractive": {"relevance_gap": 30.0, "min_relevance": 0.0}}})
    members = [f"team={team}", f"personal={personal}"]
    with Federation.open(members, timeout=30, config=wide) as federation:
        yield federation


def members(team: Path, personal: str) -> list[str]:
    return ["--index", f"team={team}", "--index", f"personal={personal}"]


# -- the command line ------------------------------------------------------------------------


def test_cli_search_fuses_both_indexes_and_names_each_hit_s_index(
    team: Path, personal: str
) -> None:
    result = runner.invoke(app, ["search", "key rotation", *members(team, personal), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["warnings"] == []
    assert {(hit["index"], hit["source"]) for hit in shown["hits"][:2]} == {
        ("team", "team/rotation.md"),
        ("personal", "notes/keys.md"),
    }
    text = runner.invoke(app, ["search", "key rotation", *members(team, personal)])
    assert text.exit_code == 0, text.output
    assert "team: team/rotation.md" in text.stdout
    assert "personal: notes/keys.md" in text.stdout


def test_cli_ask_cites_into_each_index(team: Path, personal: str, tmp_path: Path) -> None:
    # Every sentence within reach of the best is quoted, so both members are (see `both`).
    config = tmp_path / "ragwright.toml"
    config.write_text("[answer.extractive]\nrelevance_gap = 30.0\nmin_relevance = 0.0\n")
    wide = [*members(team, personal), "--config", str(config)]
    result = runner.invoke(app, ["ask", QUESTION, *wide, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert {c["index"] for c in answer["citations"]} == {"team", "personal"}
    text = runner.invoke(app, ["ask", QUESTION, *wide])
    assert text.exit_code == 0, text.output
    assert "team: team/rotation.md chars" in text.stdout
    assert "personal: notes/keys.md chars" in text.stdout


def test_cli_ask_with_an_llm_engine_writes_from_the_fused_hits(team: Path, personal: str) -> None:
    with OpenAIServer(quoting_responder) as server:
        llm = ["--engine", "stuff", "--llm", "openai", "--model", "m1", "--base-url", server.url]
        result = runner.invoke(app, ["ask", QUESTION, *members(team, personal), *llm, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["engine"] == "stuff" and answer["usage"]["calls"] == 1
    prompt = json.dumps(server.requests[-1]["messages"])
    assert "team/rotation.md" in prompt and "notes/keys.md" in prompt
    assert answer["citations"] and all(c["index"] for c in answer["citations"])
    for citation in answer["citations"]:
        hit = next(h for h in answer["hits"] if h["chunk_id"] == citation["chunk_id"])
        assert citation["index"] == hit["index"]


def test_cli_a_missing_index_is_a_warning_or_with_strict_an_error(
    team: Path, tmp_path: Path
) -> None:
    args = ["search", "key rotation", "--index", f"team={team}", "--index", f"gone={tmp_path}/x"]
    partial = runner.invoke(app, [*args, "--json"])
    assert partial.exit_code == 0, partial.output
    shown = json.loads(partial.stdout)
    assert {hit["index"] for hit in shown["hits"]} == {"team"}
    assert shown["warnings"] and "index gone is left out" in shown["warnings"][0]
    assert "warning: index gone is left out" in partial.stderr
    strict = runner.invoke(app, [*args, "--federation", "strict"])
    assert strict.exit_code == 2
    assert "error: index gone:" in strict.stderr and "Traceback" not in strict.output


def test_cli_refuses_one_embedder_for_several_indexes(team: Path, personal: str) -> None:
    result = runner.invoke(
        app, ["search", "keys", *members(team, personal), "--embedder", "hashing"]
    )
    assert result.exit_code == 2
    assert "each index of a federation embeds the query" in result.stderr


def test_cli_one_index_still_searches_as_before(team: Path) -> None:
    result = runner.invoke(app, ["search", "key rotation", "--index", str(team), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert "warnings" not in shown and shown["hits"][0]["index"] is None


# -- HTTP ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(both: Federation) -> Iterator[str]:
    settings = ServerSettings()
    application = create_federation_app(both, settings, host="127.0.0.1")
    with running(server_for(application, "127.0.0.1", 0, settings, log_level="warning")) as url:
        yield url


def test_http_search_and_lookups_go_to_the_member_holding_each_hit(api: str) -> None:
    found = httpx.post(f"{api}/v1/search", json={"query": "key rotation", "top_k": 5})
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["warnings"] == [] and body["content_trust"] == "untrusted"
    assert {hit["index"] for hit in body["hits"]} == {"team", "personal"}
    for hit in body["hits"]:
        chunk = httpx.get(f"{api}/v1/chunks/{hit['chunk_id']}", params={"index": hit["index"]})
        assert chunk.status_code == 200 and chunk.json()["index"] == hit["index"]
        assert chunk.json()["text"] == hit["text"]
    other = next(h for h in body["hits"] if h["index"] == "personal")
    absent = httpx.get(f"{api}/v1/chunks/{other['chunk_id']}", params={"index": "team"})
    assert absent.status_code == 404
    unknown = httpx.get(f"{api}/v1/chunks/{other['chunk_id']}", params={"index": "nobody"})
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "invalid_argument"
    listed = httpx.get(f"{api}/v1/documents").json()["documents"]
    assert {(d["index"], d["source"]) for d in listed} >= {("personal", "notes/keys.md")}
    described = httpx.get(f"{api}/v1/federation").json()
    assert [m["name"] for m in described["members"]] == ["team", "personal"]


def test_http_ask_citations_resolve_in_their_member(api: str) -> None:
    answer = httpx.post(f"{api}/v1/ask", json={"question": QUESTION, "top_k": 4}, timeout=60)
    assert answer.status_code == 200, answer.text
    citations = answer.json()["citations"]
    assert {c["index"] for c in citations} == {"team", "personal"}
    for citation in citations:
        document = httpx.get(
            f"{api}/v1/documents/{citation['document_id']}", params={"index": citation["index"]}
        ).json()
        assert document["index"] == citation["index"]
        assert (
            document["content"][citation["char_start"] : citation["char_end"]]
            == (citation["quote"])
        )
    streamed = httpx.post(f"{api}/v1/ask", json={"question": QUESTION, "stream": True})
    events = dict(sse_events(streamed.text))
    assert {c["index"] for c in events["answer"]["citations"]} == {"team", "personal"}


def test_http_partial_strict_and_refused_filter(team: Path, personal: str) -> None:
    refusing = FieldRefusingIndex(personal, "year", create=False, read_only=True)
    with Index(team, create=False, read_only=True) as plain, refusing:
        for strict in (False, True):
            federation = Federation([("team", plain), ("personal", refusing)], strict=strict)
            settings = ServerSettings()
            application = create_federation_app(federation, settings, host="127.0.0.1")
            server = server_for(application, "127.0.0.1", 0, settings, log_level="warning")
            with running(server) as url:
                body = {"query": "key rotation", "filter": "year >= 2024"}
                response = httpx.post(f"{url}/v1/search", json=body)
            federation.close()
            if strict:
                assert response.status_code == 400
                assert response.json()["error"]["code"] == "unsupported_filter"
                assert "index personal" in response.json()["error"]["message"]
            else:
                assert response.status_code == 200
                assert [h["index"] for h in response.json()["hits"]] == ["team"]
                assert "cannot apply the filter" in response.json()["warnings"][0]


def test_serve_reads_the_federation_table(team: Path, personal: str, tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    config.write_text(
        f'[federation]\nmembers = ["team={team}", {{ name = "personal", index = "{personal}" }}]\n'
        f"timeout = 120\nstrict = true\n[server]\nshutdown_timeout = 5\n",
        "utf-8",
    )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWRIGHT_")}
    command = [sys.executable, "-m", "ragwright", "serve", "--config", str(config),
               "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    assert server.stderr is not None
    stderr = server.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
    try:
        wait_for(lines, "Application startup complete")
        base = f"http://127.0.0.1:{port}"
        found = httpx.post(f"{base}/v1/search", json={"query": "key rotation"}, timeout=60)
        assert found.status_code == 200, found.text
        assert {hit["index"] for hit in found.json()["hits"]} == {"team", "personal"}
        described = httpx.get(f"{base}/v1/federation", timeout=60).json()
        assert (described["timeout"], described["strict"]) == (120.0, True)
    finally:
        server.terminate()
        server.wait(timeout=60)


# -- MCP -------------------------------------------------------------------------------------


def call(federation: Federation, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> Any:
        async with Client(build_federation_server(federation)) as client:
            return await client.call_tool(tool, arguments)

    result = anyio.run(main)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def test_mcp_tools_name_and_resolve_each_index(both: Federation) -> None:
    found = call(both, "search", {"query": "key rotation", "top_k": 4})
    assert found["warnings"] == []
    assert {hit["index"] for hit in found["hits"]} == {"team", "personal"}
    hit = next(h for h in found["hits"] if h["index"] == "personal")
    chunk = call(both, "get_chunk", {"chunk_id": hit["chunk_id"], "index": "personal"})
    assert chunk["index"] == "personal" and chunk["chunk"]["text"] == hit["text"]
    answer = call(both, "ask", {"question": QUESTION, "top_k": 4})
    assert {c["index"] for c in answer["citations"]} == {"team", "personal"}
    for citation in answer["citations"]:
        document = call(
            both, "get_document", {"document": citation["document_id"], "index": citation["index"]}
        )
        assert document["index"] == citation["index"]
        content = document["content"]["text"]
        assert content[citation["char_start"] : citation["char_end"]] == citation["quote"]["text"]
    indexes = call(both, "list_indexes", {})
    assert [m["name"] for m in indexes["indexes"]] == ["team", "personal"]
    sources = call(both, "list_sources", {})
    assert {(s["index"], s["source"]["text"]) for s in sources["sources"]} >= {
        ("team", "team/rotation.md")
    }


def test_mcp_stdio_server_reads_the_federation_table(
    team: Path, personal: str, tmp_path: Path
) -> None:
    config = tmp_path / "ragwright.toml"
    config.write_text(f'[federation]\nmembers = ["team={team}", "personal={personal}"]\n', "utf-8")
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "ragwright", "mcp", "--config", str(config)]
    )

    async def main() -> Any:
        with anyio.fail_after(120):
            async with Client(parameters) as client:
                return await client.call_tool("search", {"query": "key rotation"})

    result = anyio.run(main)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert {hit["index"] for hit in result.structured_content["hits"]} == {"team", "personal"}
