"""Named collections on every surface: the Python API, the CLI, HTTP and MCP. Each
collection has its own documents, embedding space and settings; unnamed calls use ``default``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from typer.testing import CliRunner

from ragwright import ConfigError, Index, UnknownCollection
from ragwright.cli import app as cli
from ragwright.mcp_server import build_server
from ragwright.testing import HashingEmbedder
from server_helpers import serve


@pytest.fixture
def two_collections(tmp_path: Path) -> Path:
    """An index whose default collection holds a guide and whose ``papers`` collection (with
    another embedding space) holds a paper."""
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "install.md").write_text("# Install\n\nRun pip install.", "utf-8")
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "orbit.md").write_text("# Orbits\n\nKepler's laws of orbits.", "utf-8")
    location = tmp_path / "kb"
    with Index(location, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([tmp_path / "guide"]).ok
    with Index(location, collection="papers", embedder=HashingEmbedder(dimension=64)) as papers:
        assert papers.ingest([tmp_path / "papers"]).ok
    return location


def sources(hits: list[Any]) -> list[str]:
    return [h.source for h in hits]


def test_collections_keep_their_own_documents_and_spaces(two_collections: Path) -> None:
    with Index(two_collections) as kb, kb.open_collection("papers") as papers:
        assert kb.collections() == ["default", "papers"]
        assert sources(kb.search("orbits install", mode="bm25")) == ["guide/install.md"]
        assert sources(papers.search("orbits install", mode="bm25")) == ["papers/orbit.md"]
        assert sources(papers.search("Kepler orbits")) == ["papers/orbit.md"]
        assert kb.space is not None and papers.space is not None
        assert (kb.space.dimension, papers.space.dimension) != (64, 64)
        assert papers.space.dimension == 64


def test_a_missing_collection_is_a_typed_error(two_collections: Path) -> None:
    with pytest.raises(UnknownCollection, match="collections create notes"):
        Index(two_collections, collection="notes", create=False)
    with pytest.raises(ConfigError, match="collection name"):
        Index(two_collections, collection="Bad Name")


def test_cli_creates_lists_uses_and_drops_collections(two_collections: Path) -> None:
    runner = CliRunner()
    index = ["--index", str(two_collections)]
    assert runner.invoke(cli, ["collections", "create", "notes", *index]).exit_code == 0
    listed = runner.invoke(cli, ["collections", "list", *index, "--json"])
    assert listed.exit_code == 0 and '"notes"' in listed.stdout
    found = runner.invoke(
        cli, ["search", "Kepler", "--mode", "bm25", "--collection", "papers", *index, "--json"]
    )
    assert found.exit_code == 0 and "papers/orbit.md" in found.stdout
    missing = runner.invoke(cli, ["docs", "list", "--collection", "nope", *index])
    assert missing.exit_code == 2 and "collections create nope" in missing.stderr
    dropped = runner.invoke(cli, ["collections", "drop", "notes", "--yes", *index])
    assert dropped.exit_code == 0
    again = runner.invoke(cli, ["collections", "drop", "notes", "--yes", *index])
    assert again.exit_code == 2 and "no collection" in again.stderr
    refused = runner.invoke(cli, ["collections", "drop", "default", "--yes", *index])
    assert refused.exit_code == 2 and "cannot be dropped" in refused.stderr


@pytest.fixture
def client(two_collections: Path) -> Iterator[httpx.Client]:
    with (
        Index(two_collections) as kb,
        serve(kb) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield client


def test_http_routes_serve_each_collection(client: httpx.Client) -> None:
    listed = client.get("/v1/collections")
    assert listed.json() == {"collections": ["default", "papers"], "default": "default"}
    query = {"query": "orbits install", "mode": "bm25"}
    unscoped = client.post("/v1/search", json=query).json()["hits"]
    scoped = client.post("/v1/collections/papers/search", json=query).json()["hits"]
    assert [h["source"] for h in unscoped] == ["guide/install.md"]
    assert [h["source"] for h in scoped] == ["papers/orbit.md"]
    documents = client.get("/v1/collections/papers/documents").json()["documents"]
    assert [d["source"] for d in documents] == ["papers/orbit.md"]
    uploaded = client.post(
        "/v1/collections/papers/documents",
        files={"files": ("moon.md", b"# Moon\n\nTides follow the moon.", "text/markdown")},
    )
    assert uploaded.status_code == 200, uploaded.text
    tides = client.post("/v1/collections/papers/search", json={"query": "tides", "mode": "bm25"})
    assert [h["source"] for h in tides.json()["hits"]] == ["uploads/moon.md"]
    assert client.post("/v1/search", json={"query": "tides", "mode": "bm25"}).json()["hits"] == []
    stats = client.get("/v1/collections/papers/stats").json()
    assert stats["documents"] == 2


def test_http_names_an_unknown_or_invalid_collection(client: httpx.Client) -> None:
    missing = client.post("/v1/collections/nope/search", json={"query": "x"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "unknown_collection"
    invalid = client.post("/v1/collections/Bad-Name/search", json={"query": "x"})
    assert invalid.status_code == 400
    assert "invalid collection name" in invalid.json()["error"]["message"]


def call(kb: Index, tool: str, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(build_server(kb)) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_mcp_tools_take_a_collection(two_collections: Path) -> None:
    with Index(two_collections) as kb:
        listed = call(kb, "list_collections", {}).structured_content
        assert listed == {"collections": ["default", "papers"], "default": "default"}
        found = call(kb, "search", {"query": "Kepler", "mode": "bm25", "collection": "papers"})
        hits = found.structured_content["hits"]
        assert [h["source"]["text"] for h in hits] == ["papers/orbit.md"]
        sources_listed = call(kb, "list_sources", {"collection": "papers"}).structured_content
        assert [s["source"]["text"] for s in sources_listed["sources"]] == ["papers/orbit.md"]
        missing = call(kb, "search", {"query": "x", "collection": "nope"})
        assert missing.is_error and "collections create nope" in missing.content[0].text
