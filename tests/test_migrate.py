"""`ragwright migrate`: a copy between stores keeps ids, offsets, vectors and results, with no
re-embedding; a re-run resumes; a target holding other documents is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright import Index, StoreError
from ragwright.cli import app as cli
from ragwright.pipeline.migrate import migrate
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

QUERIES = ["install on linux", "orbits of planets", "release notes streaming"]


def build(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Guide\n\n## Install\n\nRun pip install on Linux.\n\n## Filters\n\nFilter by source.",
        "utf-8",
    )
    (docs / "notes.txt").write_text("Release notes: streaming answers arrive.", "utf-8")
    (docs / "empty.md").write_text("", "utf-8")
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "orbit.md").write_text("# Orbits\n\nPlanets move in orbits.", "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs]).ok
    with Index(tmp_path / "kb", collection="papers", embedder=HashingEmbedder(32)) as papers:
        assert papers.ingest([tmp_path / "papers"]).ok
    return tmp_path / "kb"


def snapshot(location: Path | str, collection: str = "default") -> dict[str, object]:
    """Everything a copy must keep: chunks with ids and spans, settings, and search results."""
    with Index(location, collection=collection, create=False) as kb:
        chunks = sorted(
            (c.id, c.document_id, c.index, c.char_start, c.char_end, c.text)
            for d in kb.documents()
            for c in kb.chunks_of(d.id)
        )
        results = {
            (q, mode): [(h.chunk.id, round(h.score, 5)) for h in kb.search(q, mode=mode)]
            for q in QUERIES
            for mode in ("bm25", "vector", "hybrid")
        }
        return {
            "chunks": chunks,
            "results": results,
            "space": kb.space,
            "chunking": kb.chunking,
            "embedder": kb.embedder_spec,
            "documents": [(d.source, d.content_hash) for d in kb.documents()],
        }


def test_migrate_copies_every_collection_exactly(tmp_path: Path) -> None:
    source = build(tmp_path)
    target = tmp_path / "copy"
    result = CliRunner().invoke(cli, ["migrate", str(source), str(target)])
    assert result.exit_code == 0, result.output
    assert "default: 3 documents" in result.stdout and "verified" in result.stdout
    for collection in ("default", "papers"):
        assert snapshot(target, collection) == snapshot(source, collection)
    again = CliRunner().invoke(cli, ["migrate", str(source), str(target), "--json"])
    assert again.exit_code == 0, again.output
    assert '"skipped": 3' in again.stdout and '"copied": 0' in again.stdout


def test_migrate_resumes_after_a_partial_copy(tmp_path: Path) -> None:
    source = build(tmp_path)
    with SQLiteStore(source, create=False) as reading, SQLiteStore(tmp_path / "copy") as writing:
        first = migrate(reading, writing)
        assert (first.documents, first.copied) == (3, 3)
        writing.delete_many([d.id for d in writing.list_documents()[:2]])
        resumed = migrate(reading, writing)
        assert (resumed.copied, resumed.skipped, resumed.chunks) == (2, 1, first.chunks)


def test_migrate_refuses_a_target_holding_other_documents(tmp_path: Path) -> None:
    source = build(tmp_path)
    other = tmp_path / "other-docs"
    other.mkdir()
    (other / "stray.md").write_text("A stray document.", "utf-8")
    with Index(tmp_path / "busy", embedder=HashingEmbedder()) as busy:
        assert busy.ingest([other]).ok
    with (
        SQLiteStore(source, create=False) as reading,
        SQLiteStore(tmp_path / "busy") as writing,
        pytest.raises(StoreError, match="empty collection"),
    ):
        migrate(reading, writing)
