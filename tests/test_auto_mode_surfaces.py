"""``mode auto`` on every surface: the planner's route and its reason come back with the hits
(CLI, HTTP, MCP search) and with every answer (``ask`` defaults to auto); a planned mode the
index cannot run (graph without a graph, global without global search) runs as hybrid and
the reason says so."""

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
from ragwright import Index
from ragwright.cli import app
from ragwright.mcp_server import build_server
from ragwright.pipeline.search.request import SearchRequest
from ragwright.server import ServerSettings
from ragwright.testing import HashingEmbedder
from server_helpers import serve

DOCS = {
    "summit.md": "Barack Obama met Angela Merkel in Berlin.\n\nObama flew home from Berlin.\n",
    "lab.md": "IBM opened a lab in Zurich. The I.B.M. team grew.\n",
}
BRIDGE = "Where did the man who met Angela Merkel fly home from?"
AGGREGATE = "What are the main themes of the documents?"


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    return docs


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def ingest(graph: bool) -> None:
    extra = ["--graph", "--extractor", "capitalized"] if graph else []
    result = cli("ingest", "docs", "--embedder", "hashing", *extra)
    assert result.exit_code == 0, result.output


def test_cli_search_auto_takes_the_graph_and_says_why(corpus: Path) -> None:
    # No gate (the sample pages have no titles to bridge to), so the walk's ranking shows.
    (corpus.parent / "ragwright.toml").write_text("[search]\ngraph_bridge_hits = 0\n", "utf-8")
    ingest(graph=True)
    found = json.loads(cli("search", BRIDGE, "--mode", "auto", "--json").stdout)
    assert found["mode"] == "auto"
    assert found["route"]["mode"] == "graph" and found["route"]["planner"] == "rules"
    assert "bridge phrasing 'the man who met'" in found["route"]["reason"]
    assert any("graph" in hit["arms"] for hit in found["hits"])
    shown = cli("search", BRIDGE, "--mode", "auto")
    assert shown.exit_code == 0 and "route: graph (bridge phrasing" in shown.output
    plain = json.loads(cli("search", BRIDGE, "--json").stdout)  # search's default is hybrid
    assert plain["route"]["planner"] == "request" and plain["route"]["mode"] == "hybrid"


def test_cli_ask_defaults_to_hybrid_as_search_does(corpus: Path) -> None:
    ingest(graph=True)
    answer = json.loads(cli("ask", BRIDGE, "--json").stdout)
    assert answer["route"] == {
        "mode": "hybrid", "planned": "hybrid", "reason": "mode hybrid was asked for",
        "planner": "request",
    }  # fmt: skip
    shown = cli("ask", BRIDGE)
    assert shown.exit_code == 0, shown.output
    assert "route:" not in shown.output  # the mode the user ran is no news


def test_cli_ask_and_search_share_the_search_tables_mode(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One default for both: ``[search] mode`` (here from the environment), else hybrid;
    ``--mode`` wins over it."""
    ingest(graph=True)
    monkeypatch.setenv("RAGWRIGHT_SEARCH__MODE", "auto")
    for command in ("ask", "search"):
        shown = json.loads(cli(command, BRIDGE, "--json").stdout)
        assert shown["route"]["planner"] == "rules" and shown["route"]["mode"] == "graph"
    answer = json.loads(cli("ask", BRIDGE, "--mode", "bm25", "--json").stdout)
    assert answer["route"]["mode"] == "bm25"


def test_cli_ask_auto_falls_back_where_the_index_cannot(corpus: Path) -> None:
    ingest(graph=False)
    answer = json.loads(cli("ask", BRIDGE, "--mode", "auto", "--json").stdout)
    assert answer["route"]["planned"] == "graph" and answer["route"]["mode"] == "hybrid"
    assert answer["route"]["reason"].endswith(
        "this index has no entity graph (graph build), so hybrid"
    )
    shown = cli("ask", AGGREGATE, "--mode", "auto")
    assert shown.exit_code == 0, shown.output
    assert "note: route" not in shown.output
    assert "route: hybrid (aggregation cue 'main themes'" in " ".join(shown.output.split())
    assert "aggregate_mode graph" in " ".join(shown.output.split())
    assert "no entity graph" in " ".join(shown.output.split())
    asked = json.loads(cli("ask", BRIDGE, "--mode", "bm25", "--json").stdout)
    assert asked["route"] == {
        "mode": "bm25", "planned": "bm25", "reason": "mode bm25 was asked for", "planner": "request"
    }  # fmt: skip
    refused = cli("ask", BRIDGE, "--mode", "teleport")
    assert refused.exit_code == 2 and "Traceback" not in refused.output


@pytest.fixture
def graphed(corpus: Path, tmp_path: Path) -> Iterator[Index]:
    ingest(graph=True)
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        yield index


def test_http_search_and_ask_return_the_route(graphed: Index) -> None:
    with serve(graphed) as url, httpx.Client(base_url=url, timeout=30) as client:
        found = client.post("/v1/search", json={"query": BRIDGE, "mode": "auto", "top_k": 3})
        assert found.status_code == 200, found.text
        assert found.json()["route"]["mode"] == "graph"
        by_default = client.post("/v1/ask", json={"question": AGGREGATE})
        assert by_default.json()["route"]["planner"] == "request"  # hybrid, as search
        answered = client.post("/v1/ask", json={"question": AGGREGATE, "mode": "auto"})
        assert answered.status_code == 200, answered.text
        route = answered.json()["route"]
        assert (route["planned"], route["mode"]) == ("graph", "graph")
        assert "aggregate_mode graph" in route["reason"]
        hybrid = client.post("/v1/ask", json={"question": BRIDGE})
        assert hybrid.json()["route"]["mode"] == "hybrid"
        bad = client.post("/v1/ask", json={"question": BRIDGE, "mode": "teleport"})
        assert bad.status_code == 422
    # The server's [search] mode is the default of both, as on the command line.
    planned = ServerSettings(search=SearchRequest(mode="auto"))
    with serve(graphed, planned) as url, httpx.Client(base_url=url, timeout=30) as client:
        for path, key in (("/v1/search", "query"), ("/v1/ask", "question")):
            routed = client.post(path, json={key: BRIDGE}).json()["route"]
            assert (routed["planner"], routed["mode"]) == ("rules", "graph"), path


def call(index: Index, tool: str, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(build_server(index)) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_mcp_search_and_ask_return_the_route(graphed: Index) -> None:
    found = call(graphed, "search", {"query": BRIDGE, "mode": "auto", "top_k": 3})
    assert not found.is_error, found.content
    assert found.structured_content["route"]["mode"] == "graph"
    by_default = call(graphed, "ask", {"question": BRIDGE})
    assert by_default.structured_content["route"]["mode"] == "hybrid"
    answered = call(graphed, "ask", {"question": BRIDGE, "mode": "auto"})
    assert not answered.is_error, answered.content
    assert answered.structured_content["route"]["mode"] == "graph"
    assert "bridge phrasing" in answered.structured_content["route"]["reason"]
