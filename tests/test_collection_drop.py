"""A collection dropped while a server runs: the server stops serving it (404
``unknown_collection``), and serves one created again under the same name afresh (its own
documents and embedding space), on SQLite and on PostgreSQL, with the drop done by another
process (the CLI) or by the server's own process."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from ragwright import Index, UnknownCollection
from ragwright.cli import app as cli
from ragwright.collection_pool import CollectionPool
from ragwright.stores import open_backend
from ragwright.testing import HashingEmbedder
from server_helpers import serve_process


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "kb")
    url: str = request.getfixturevalue("pg_url")
    return url


def build(location: str, tmp_path: Path) -> None:
    """A default collection with a guide; ``papers`` (64 dimensions) with a paper on orbits."""
    files = (("guide", "install.md", "# Install\n\nRun pip install."),
             ("papers", "orbit.md", "# Orbits\n\nKepler's laws of orbits."))  # fmt: skip
    for folder, name, text in files:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text, "utf-8")
    with Index(location, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([tmp_path / "guide"]).ok
    with Index(location, collection="papers", embedder=HashingEmbedder(dimension=64)) as papers:
        assert papers.ingest([tmp_path / "papers"]).ok


def recreate(location: str, tmp_path: Path) -> None:
    """``papers`` again, with another document and another embedding space (32 dimensions)."""
    (tmp_path / "moons").mkdir()
    (tmp_path / "moons" / "moon.md").write_text("# Moon\n\nTides follow the moon.", "utf-8")
    runner = CliRunner()
    created = runner.invoke(cli, ["collections", "create", "papers", "--index", location])
    assert created.exit_code == 0, created.output
    with Index(location, collection="papers", embedder=HashingEmbedder(dimension=32)) as papers:
        assert papers.ingest([tmp_path / "moons"]).ok


def search(client: httpx.Client, query: str, mode: str = "bm25") -> httpx.Response:
    return client.post("/v1/collections/papers/search", json={"query": query, "mode": mode})


def sources(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [Path(hit["source"]).name for hit in response.json()["hits"]]


@pytest.mark.slow
def test_a_server_stops_serving_a_dropped_collection_and_serves_a_new_one_fresh(
    location: str, tmp_path: Path
) -> None:
    build(location, tmp_path)
    with (
        serve_process(location, tmp_path) as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        assert sources(search(client, "Kepler")) == ["orbit.md"]  # papers is open now
        dropped = CliRunner().invoke(
            cli, ["collections", "drop", "papers", "--yes", "--index", location]
        )
        assert dropped.exit_code == 0, dropped.output
        for response in (search(client, "Kepler"),
                         client.get("/v1/collections/papers/documents")):  # fmt: skip
            assert response.status_code == 404, response.text
            assert response.json()["error"]["code"] == "unknown_collection"
        assert sources(client.post("/v1/search", json={"query": "pip", "mode": "bm25"})) == [
            "install.md"
        ]  # the default collection is untouched
        recreate(location, tmp_path)
        assert sources(search(client, "Kepler")) == []
        assert sources(search(client, "tides")) == ["moon.md"]
        assert sources(search(client, "tides follow", mode="hybrid")) == ["moon.md"]  # 32 dims
        documents = client.get("/v1/collections/papers/documents").json()["documents"]
        assert [Path(d["source"]).name for d in documents] == ["moon.md"]


def test_a_pool_reopens_a_collection_dropped_by_its_own_process(
    location: str, tmp_path: Path
) -> None:
    build(location, tmp_path)
    with Index(location) as kb:
        pool = CollectionPool(kb)
        try:
            first = pool.get("papers")
            assert first.is_current() and pool.get("papers") is first  # kept open
            with closing(open_backend(location)) as backend:
                assert backend.drop_collection("papers")
            assert not first.is_current()
            with pytest.raises(UnknownCollection):
                pool.get("papers")
            recreate(location, tmp_path)
            fresh = pool.get("papers")
            assert fresh is not first and fresh.space is not None
            assert fresh.space.dimension == 32
            assert [Path(h.source).name for h in fresh.search("tides", mode="vector")] == [
                "moon.md"
            ]
        finally:
            pool.close()
