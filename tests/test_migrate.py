"""`ragwright migrate`: a copy between stores keeps ids, offsets, vectors and results, with no
re-embedding, SQLite ⇄ PostgreSQL with the LLM records too; a re-run resumes and adds nothing
twice; a target holding other documents is refused."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from global_corpus import write_corpus
from ragwright import DocumentRefused, Index, StoreError
from ragwright.cli import app as cli
from ragwright.models import CacheStats, LedgerRow, Usage
from ragwright.models.communities import CommunitySettings
from ragwright.pipeline.rebuild.migrate import migrate
from ragwright.pipeline.rebuild.migrate_llm import migrate_llm_records
from ragwright.ports import Completion, DocumentWrite, LLMRecordsCopy, TokenLogprob
from ragwright.stores import open_backend
from ragwright.stores.postgres import PostgresBackend
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
            for d in kb.documents.list()
            for c in kb.documents.chunks_of(d.id)
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
            "chunking": kb.ingestion.chunking,
            "embedder": kb.embedding.spec,
            "documents": [(d.source, d.content_hash) for d in kb.documents.list()],
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


# -- SQLite ⇄ PostgreSQL, with the LLM records ------------------------------------------------


def record_llm_use(location: Path | str) -> None:
    """Ledger calls (two identical ones among them), cached responses and the fence key."""
    with Index(location, create=False) as kb:
        records = kb.llms.records
        records.record_call("request", "gpt-x", Usage(1, 100, 20), 0.5)
        records.record_call("request", "gpt-x", Usage(1, 100, 20), 0.5)
        records.record_call("ingest", "small", Usage(1, 5, 1), None)
        records.put_response("k1", Completion("an answer", "gpt-x", Usage(1, 7, 3), "stop"))
        records.put_response(
            "k2", Completion("é", "small", Usage(1, 1, 1), None, (TokenLogprob("é", -0.125),))
        )
        assert records.get_response("k1") is not None  # one hit
        records.boundary_key()


def llm_snapshot(location: Path | str) -> tuple[object, ...]:
    with closing(open_backend(str(location))) as backend:
        records = backend.llm_records()
        assert isinstance(records, LLMRecordsCopy)
        return (
            records.recorded_calls(),
            records.cached_responses(),
            records.stored_boundary_key(),
            records.ledger(),
            records.cache_stats(),
        )


def test_migrate_round_trips_sqlite_postgres_sqlite_with_the_llm_records(
    tmp_path: Path, pg_url: str
) -> None:
    source = build(tmp_path)
    record_llm_use(source)
    back = tmp_path / "back"
    for origin, destination in ((str(source), pg_url), (pg_url, str(back))):
        result = CliRunner().invoke(cli, ["migrate", origin, destination])
        assert result.exit_code == 0, result.output
        assert "LLM records: 3 ledger calls and 2 cached responses copied" in result.stdout
        assert "fence key copied" in result.stdout
    for location in (pg_url, back):
        for collection in ("default", "papers"):
            assert snapshot(location, collection) == snapshot(source, collection)
        assert llm_snapshot(location) == llm_snapshot(source)
    *_, key, ledger, stats = llm_snapshot(back)
    assert ledger == [LedgerRow("gpt-x", 2, 200, 40, 1.0), LedgerRow("small", 1, 5, 1, None)]
    assert stats == CacheStats(2, 1) and isinstance(key, bytes) and len(key) == 32
    again = CliRunner().invoke(cli, ["migrate", pg_url, str(back), "--json"])
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["collections"]["default"]["copied"] == 0
    assert report["llm_records"] == {
        "calls_copied": 0, "calls_present": 3, "responses_copied": 0,
        "responses_present": 2, "boundary_key": "same",
    }  # fmt: skip
    assert llm_snapshot(back) == llm_snapshot(source)  # nothing added twice


def test_a_target_with_its_own_fence_key_keeps_it_and_the_report_says_so(
    tmp_path: Path, pg_url: str
) -> None:
    source = build(tmp_path)
    record_llm_use(source)
    with PostgresBackend(pg_url) as backend:
        own = backend.llm_records().boundary_key()
        backend.llm_records().record_call("request", "gpt-x", Usage(1, 100, 20), 0.5)
    with closing(open_backend(str(source))) as reading, closing(open_backend(pg_url)) as writing:
        from_records, to_records = reading.llm_records(), writing.llm_records()
        assert isinstance(from_records, LLMRecordsCopy)
        assert isinstance(to_records, LLMRecordsCopy)
        report = migrate_llm_records(from_records, to_records)
        assert report.boundary_key == "kept the target's"
        assert to_records.stored_boundary_key() == own
        # the target's own call was made at another time: it is not one of the source's
        assert (report.calls_copied, report.calls_present) == (3, 0)
        assert len(to_records.recorded_calls()) == 4
        assert [r.key for r in to_records.cached_responses()] == ["k1", "k2"]
    result = CliRunner().invoke(cli, ["migrate", str(source), pg_url])
    assert result.exit_code == 0, result.output
    assert "the target's own fence key kept" in result.stdout


def graph_view(location: Path | str) -> tuple[object, ...]:
    with Index(location, create=False) as kb:
        stats = kb.graph.stats()
        snapshot = kb.graph.source.graph_snapshot()
        edges = sorted(
            (snapshot.entity_keys[a], snapshot.entity_keys[b], round(float(w), 6))
            for a, b, w in zip(
                snapshot.edge_source, snapshot.edge_target, snapshot.edge_weight, strict=True
            )
        )
        counts = (stats.extracted, stats.mentions, stats.relations, stats.entities, stats.edges)
        return counts, snapshot.entity_keys, snapshot.chunk_ids, edges, kb.graph.extractor


def test_migrate_copies_the_graph_both_ways_and_names_what_it_left_behind(
    tmp_path: Path, pg_url: str
) -> None:
    docs = write_corpus(tmp_path / "docs")
    source = tmp_path / "kb"
    with Index(source, embedder=HashingEmbedder()) as kb:
        kb.ingest(docs, base=tmp_path, extractor="rules")
        kb.communities.build(CommunitySettings(min_mentions=1))
        communities = len(kb.communities.list(0))
    assert graph_view(source)[0][1] > 0  # mentions
    back = tmp_path / "back"
    first = CliRunner().invoke(cli, ["migrate", str(source), pg_url])
    assert first.exit_code == 0, first.output
    # The communities stayed behind: the copy is not called verified, and the report says so.
    assert "(verified;" not in first.stdout and "the rest verified" in first.stdout
    assert "not copied:" in first.stdout and "communities --rebuild" in first.stdout
    assert communities > 0
    second = CliRunner().invoke(cli, ["migrate", pg_url, str(back)])
    assert second.exit_code == 0, second.output
    assert "graph facts of" in second.stdout and "(verified;" in second.stdout
    assert "not copied" not in second.stdout
    for location in (pg_url, back):
        assert graph_view(location) == graph_view(source)


def test_the_copy_names_the_fact_vectors_it_left_and_graph_build_embeds_them(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text(
        "# Ada\n\nAda Lovelace was born in London. Charles Babbage designed the Analytical "
        "Engine. Ada Lovelace worked with Charles Babbage in London.\n",
        "utf-8",
    )
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs], extractor="spacy").ok
    copy = tmp_path / "copy"
    first = CliRunner().invoke(cli, ["migrate", str(tmp_path / "kb"), str(copy)])
    assert first.exit_code == 0, first.output
    assert "typed-fact vectors of 1 chunks" in first.stdout and "graph build" in first.stdout
    assert "(verified;" not in first.stdout
    with SQLiteStore(copy, create=False) as store:
        assert store.chunks_without_fact_vectors(None, 10)  # the copy lacks them
    built = CliRunner().invoke(cli, ["graph", "build", "--index", str(copy)])
    assert built.exit_code == 0, built.output
    with SQLiteStore(copy, create=False) as store:
        assert store.chunks_without_fact_vectors(None, 10) == []  # embedded by the build


class RefusingTarget:
    """A real SQLite store as the migration's target, refusing one source as a store does
    (every document of a batch checked before any is written)."""

    def __init__(self, store: SQLiteStore, refused: str) -> None:
        self._store = store
        self._refused = refused

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        for item in batch:
            if item.document.source == self._refused:
                raise DocumentRefused(item.document.source, "the target cannot hold it")
        self._store.write(batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_a_document_the_target_refuses_is_reported_and_the_rest_copied(tmp_path: Path) -> None:
    source_dir = build(tmp_path)
    with (
        SQLiteStore(source_dir, read_only=True) as source,
        SQLiteStore(tmp_path / "copy") as copy,
    ):
        target = RefusingTarget(copy, "docs/guide.md")
        report = migrate(source, target, batch_chunks=1_000)  # one batch for all three
        assert report.refused == ("docs/guide.md: the target cannot hold it",)
        assert report.copied == report.documents - 1
        copied = sorted(d.source for d in copy.list_documents())
        assert copied == ["docs/empty.md", "docs/notes.txt"]
        guide = next(d for d in source.list_documents() if d.source == "docs/guide.md")
        assert report.chunks == sum(1 for _ in source.chunk_page(None, 1000)) - guide.chunk_count
