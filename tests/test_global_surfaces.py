"""Communities and global search through their surfaces: the CLI (`graph communities`,
`search`/`ask --mode global`), HTTP and MCP give the same reports and spans, and refuse bad
input with typed errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client

from cli_helpers import runner
from global_corpus import write_corpus
from ragwright import Index
from ragwright.cli import app
from ragwright.mcp_server import build_server
from ragwright.models.communities import CommunitySettings
from ragwright.testing import HashingEmbedder
from server_helpers import serve


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_cli_communities_rebuild_list_and_global_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    write_corpus(tmp_path / "docs")
    ingested = cli("ingest", "docs", "--embedder", "hashing", "--graph", "--extractor",
                   "capitalized")  # fmt: skip
    assert ingested.exit_code == 0, ingested.output
    refused = cli("graph", "communities", "--min-mentions", "1")
    assert refused.exit_code == 2 and "--rebuild" in refused.output
    built = cli("graph", "communities", "--rebuild", "--min-mentions", "1", "--json")
    assert built.exit_code == 0, built.output
    shape = json.loads(built.stdout)
    level = shape["build"]["levels"][0]
    assert (level["communities"], level["disconnected"], level["singleton_share"]) == (3, 0, 0)
    assert shape["build"]["settings"]["min_mentions"] == 1
    titles = [c["report"]["title"] for c in shape["communities"]]
    assert len(titles) == 3 and all(titles)
    listed = cli("graph", "communities", "--level", "0")
    assert listed.exit_code == 0 and "modularity" in listed.stdout
    assert "Liverpool" in listed.stdout
    hits = json.loads(cli("search", "Beatles in Liverpool", "--mode", "global", "--json").stdout)
    assert hits["mode"] == "global" and hits["hits"][0]["source"] == "docs/music.md"
    answer = cli("ask", "What happened in Liverpool?", "--mode", "global", "--json")
    assert answer.exit_code == 0, answer.output
    body = json.loads(answer.stdout)
    assert body["citations"] and body["citations"][0]["source"] == "docs/music.md"
    flagged = cli("ask", "Did the Beatles form in Liverpool?", "--mode", "global")
    assert flagged.exit_code == 0 and "yes/no" in flagged.stdout
    # The answer itself is printed, not only its sources and notes.
    printed = cli("ask", "What happened in Liverpool?", "--mode", "global")
    assert printed.exit_code == 0, printed.output
    before_sources = " ".join(printed.stdout.split("Sources")[0].split())
    assert body["answer"] and " ".join(body["answer"].split())[:40] in before_sources
    filtered = cli("search", "Beatles", "--mode", "global", "--filter", 'source = "x"')
    assert filtered.exit_code != 0 and "filter cannot" in filtered.output


def test_cli_communities_build_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    write_corpus(tmp_path / "docs")
    ingested = cli("ingest", "docs", "--embedder", "hashing", "--graph", "--extractor",
                   "capitalized")  # fmt: skip
    assert ingested.exit_code == 0, ingested.output
    first = cli("graph", "communities", "--json")
    assert first.exit_code == 0, first.output
    shape = json.loads(first.stdout)
    assert shape["build"]["levels"] and shape["communities"]
    again = cli("graph", "communities", "--json")  # listed, not clustered again
    assert json.loads(again.stdout)["build"] == shape["build"]


@pytest.fixture
def clustered(tmp_path: Path) -> Iterator[Index]:
    docs = write_corpus(tmp_path / "docs")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest(docs, base=tmp_path, extractor="capitalized")
        kb.communities.build(CommunitySettings(min_mentions=1))
        yield kb


def test_http_global_search_and_ask(clustered: Index) -> None:
    with serve(clustered) as url, httpx.Client(base_url=url, timeout=30) as client:
        found = client.post("/v1/search", json={"query": "Beatles in Liverpool", "mode": "global"})
        answer = client.post(
            "/v1/ask", json={"question": "What happened in Liverpool?", "mode": "global"}
        )
        filtered = client.post(
            "/v1/search", json={"query": "Beatles", "mode": "global", "filter": 'source = "x"'}
        )
        bad = client.post("/v1/ask", json={"question": "x", "mode": "everything"})
    assert found.status_code == 200, found.text
    assert found.json()["hits"][0]["source"] == "docs/music.md"
    assert answer.status_code == 200 and answer.json()["citations"][0]["source"] == "docs/music.md"
    assert filtered.status_code == 400 and filtered.json()["error"]["code"]
    assert bad.status_code == 422


def test_mcp_global_search_and_ask(clustered: Index) -> None:
    async def main() -> tuple[Any, Any]:
        async with Client(build_server(clustered)) as client:
            found = await client.call_tool(
                "search", {"query": "Beatles in Liverpool", "mode": "global"}
            )
            answer = await client.call_tool(
                "ask", {"question": "What happened in Liverpool?", "mode": "global"}
            )
            return found, answer

    found, answer = anyio.run(main)
    assert not found.is_error and found.structured_content["mode"] == "global"
    assert found.structured_content["hits"][0]["source"]["text"] == "docs/music.md"
    assert not answer.is_error and answer.structured_content["citations"]
