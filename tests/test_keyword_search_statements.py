"""An unfiltered BM25 search of the SQLite store reads in two statements (the generation, then
the rows with theirs), and falls back to a read snapshot when a write came in between; what
the public search keeps from one call to the next."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.errors import ConfigError
from ragwright.filters import parse_filter
from ragwright.index import Index
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.ranked_rows import read_chunks, read_chunks_at
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import SPACE, make_document, vectors_for


def _filled(path: Path, texts: list[str]) -> SQLiteStore:
    store = SQLiteStore(path, background=False)
    store.bind_space(SPACE)
    _add(store, texts)
    return store


def _add(store: SQLiteStore, texts: list[str], first: int = 0) -> None:
    for i, text in enumerate(texts, start=first):
        document, chunks = make_document(f"doc{i}.md", [text])
        store.upsert(document, chunks, vectors_for("x", len(chunks)))


def test_an_unfiltered_search_reads_in_two_statements(tmp_path: Path) -> None:
    store = _filled(tmp_path, ["oak pine", "oak oak birch", "elm fir"])
    expected = store.keyword_search("oak", 10)  # the postings made current, in a snapshot
    statements: list[str] = []
    store._db.connection.set_trace_callback(statements.append)
    hits = store.keyword_search("oak", 10)
    store._db.connection.set_trace_callback(None)
    assert hits == expected
    assert [h.source for h in hits] == ["doc1.md", "doc0.md"]
    assert len(statements) == 2, statements
    assert not any(s.startswith(("BEGIN", "COMMIT")) for s in statements)
    store.close()


def test_a_write_since_the_postings_were_current_is_searched(tmp_path: Path) -> None:
    store = _filled(tmp_path, ["oak pine", "elm fir"])
    assert [h.source for h in store.keyword_search("oak", 10)] == ["doc0.md"]
    other = SQLiteStore(tmp_path, create=False, background=False)  # another process, say
    _add(other, ["oak oak oak"], first=5)
    assert [h.source for h in store.keyword_search("oak", 10)] == ["doc5.md", "doc0.md"]
    other.close()
    store.close()


def test_rows_read_at_another_generation_are_refused(tmp_path: Path) -> None:
    store = _filled(tmp_path, ["oak pine", "elm fir"])
    db = store._db
    rowids = [rowid for (rowid,) in db.query("SELECT rowid FROM chunks ORDER BY rowid")]
    now = db.generation()
    assert read_chunks_at(db, rowids, now) == read_chunks(db, rowids)
    assert read_chunks_at(db, rowids, now - 1) is None
    assert read_chunks_at(db, [], now) is None
    store.close()


def test_a_stores_hits_carry_their_rank(tmp_path: Path) -> None:
    store = _filled(tmp_path, ["oak pine", "oak oak birch", "elm fir"])
    assert [h.rank for h in store.keyword_search("oak", 10)] == [1, 2]
    filtered = store.keyword_search("oak", 10, parse_filter('source = "doc0.md"'))
    assert [h.rank for h in filtered] == [1]
    store.close()


def test_requests_made_from_options_are_checked_by_type(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, text in enumerate(["oak pine", "oak oak birch", "elm fir"]):
        (folder / f"doc{i}.md").write_text(text)
    index = Index(tmp_path / "index", embedder=HashingEmbedder())
    index.ingest(folder, base=folder)
    assert [h.rank for h in index.search("oak", mode="bm25", top_k=1)] == [1]
    assert [h.source for h in index.search("oak", mode="bm25", top_k=1)] == ["doc1.md"]
    with pytest.raises(ConfigError, match="top_k"):  # True == 1, but not a top_k
        index.search("oak", mode="bm25", top_k=True)
    for _ in range(2):  # refused each time, kept nowhere
        with pytest.raises(ConfigError, match="search mode"):
            index.search("oak", mode="nonsense")
    index.close()
