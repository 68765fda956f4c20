"""Graph mode on every surface: the CLI, HTTP and MCP take ``mode graph``; an index with a
graph answers with hits that say the graph found them, one without gets the typed error that
names ``ragwright graph build`` (exit 2 / HTTP 409 / an MCP tool error), never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from cli_helpers import ingest_sample_docs, runner
from ragwright import Index
from ragwright.cli import app
from ragwright.graph.extractors.rules import RuleExtractor
from ragwright.graph.snapshot import MemoryGraph
from ragwright.mcp_server import build_server
from ragwright.testing import HashingEmbedder
from server_helpers import build_index, serve

QUERY = "How do I install it?"


def graph_of(index: Index) -> MemoryGraph:
    chunks = [c for d in index.documents.list() for c in index.documents.chunks_of(d.id)]
    return MemoryGraph(RuleExtractor().extract(chunks))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with build_index(tmp_path):
        pass
    return tmp_path / "index"


@pytest.fixture
def graphed(folder: Path) -> Iterator[Index]:
    with Index(folder, embedder=HashingEmbedder()) as plain:
        graph = graph_of(plain)
    with Index(folder, embedder=HashingEmbedder(), graph=graph) as index:
        yield index


def test_cli_graph_mode_without_a_graph_says_to_build_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, ["search", "install on linux", "--mode", "graph"])
    assert result.exit_code == 2  # ragwright's own errors: one line, exit code 2
    assert "ragwright graph build" in result.output and "Traceback" not in result.output
    plain = runner.invoke(app, ["search", "install on linux", "--mode", "hybrid"])
    assert plain.exit_code == 0, plain.output


def test_http_graph_mode_answers_with_graph_hits_and_409_without_a_graph(
    graphed: Index, folder: Path
) -> None:
    # graph_bridge_hits 0: no gate, so the walk reorders (the sample docs bridge nothing).
    body = {"query": QUERY, "mode": "graph", "top_k": 3, "graph_damping": 0.6,
            "graph_keep_top": 1, "graph_keep_gap": 0.1, "graph_keep_named": 2,
            "graph_bridge_hits": 0, "graph_bridge_rank": 2}  # fmt: skip
    with serve(graphed) as url, httpx.Client(base_url=url, timeout=30) as client:
        response = client.post("/v1/search", json=body)
        assert response.status_code == 200, response.text
        found = response.json()
        assert found["mode"] == "graph" and found["hits"]
        assert any("graph" in hit["arms"] for hit in found["hits"])
        bad = client.post("/v1/search", json={**body, "graph_damping": 1.5})
        assert bad.status_code == 422
        assert client.post("/v1/search", json={**body, "graph_keep_gap": 2}).status_code == 422
        assert client.post("/v1/search", json={**body, "graph_keep_named": -1}).status_code == 422
        assert client.post("/v1/search", json={**body, "graph_bridge_rank": -1}).status_code == 422
    plain = Index(folder, embedder=HashingEmbedder())
    with plain, serve(plain) as url, httpx.Client(base_url=url, timeout=30) as client:
        refused = client.post("/v1/search", json=body)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "graph_not_built"
    assert "ragwright graph build" in refused.json()["error"]["message"]


def call_search(index: Index, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(build_server(index)) as client:
            return await client.call_tool("search", arguments)

    return anyio.run(main)


def test_mcp_graph_mode_answers_and_reports_a_missing_graph(graphed: Index, folder: Path) -> None:
    result = call_search(graphed, {"query": QUERY, "mode": "graph", "top_k": 3})
    assert not result.is_error, result.content
    assert result.structured_content["mode"] == "graph"
    assert result.structured_content["hits"]
    with Index(folder, embedder=HashingEmbedder()) as plain:
        refused = call_search(plain, {"query": QUERY, "mode": "graph"})
    assert refused.is_error
    assert "ragwright graph build" in str(refused.content[0].text)
