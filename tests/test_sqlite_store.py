from __future__ import annotations

import functools
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.errors import StoreError
from ragwright.filters import eq, parse_filter
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteBackend, SQLiteStore
from ragwright.testing.backend_contract import BackendContract
from ragwright.testing.store_contract import (
    SPACE,
    StoreContract,
    load_corpus,
    make_document,
    vectors_for,
)


class TestSQLiteStore(StoreContract):
    """BM25 scored by the in-memory cache from the first query on."""

    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index", background=False)


class TestSQLiteStoreScoringInFTS5(StoreContract):
    """The same contract with BM25 scored by SQLite itself (the one-shot path)."""

    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index", keyword_cache=False)


WORDS = (
    "cell cells protein proteins increase increasing running runner café résumé gene genes "
    "expression mouse mice tumour tumor growth factor signal signalling zebrafish covid_19 "
    "the of and risk patients trial dose"
).split()


def test_cached_bm25_equals_fts5_bm25(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    for i in range(300):
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 40))) for _ in range(2)]
        document, chunks = make_document(f"doc{i}.md", texts)
        store.upsert(document, chunks, vectors_for("x", len(chunks)))
    store.delete(store.list_documents()[0].id)
    sql = SQLiteStore(tmp_path, keyword_cache=False)
    for _ in range(60):
        query = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
        cached = [(h.chunk.id, h.score) for h in store.keyword_search(query, 15)]
        direct = [(h.chunk.id, h.score) for h in sql.keyword_search(query, 15)]
        assert [c for c, _ in cached] == [c for c, _ in direct], query
        assert [s for _, s in cached] == pytest.approx([s for _, s in direct], rel=1e-4)


def test_index_is_plain_sqlite_with_fts_in_step(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.bind_space(SPACE)
    load_corpus(store)
    store.delete(store.list_documents()[0].id)
    store.close()
    db = sqlite3.connect(tmp_path / DATABASE_NAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    indexed = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'alpha'")
    assert chunks == 4 and indexed.fetchone()[0] == 0
    assert db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_opening_a_missing_index_without_create_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="ragwright ingest"):
        SQLiteStore(tmp_path / "nothing", create=False)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    SQLiteStore(tmp_path).set_setting("schema_version", "999")
    with pytest.raises(StoreError, match="schema version 999"):
        SQLiteStore(tmp_path)


def test_filter_values_are_bound_not_spliced(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.bind_space(SPACE)
    load_corpus(store)
    hostile = eq("lang", "en' OR 1=1 --")
    assert store.keyword_search("alpha beta gamma", 10, hostile) == []
    assert len(store.list_documents()) == 5


def test_chunks_at_and_get_chunks_take_thousands_of_keys(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.bind_space(SPACE)
    document, chunks = make_document("many.md", [f"chunk number {i}" for i in range(1500)])
    store.upsert(document, chunks, vectors_for("many.md", len(chunks)))
    found = store.chunks_at([(document.id, i) for i in range(-1500, 1500)])
    assert len(found) == 3000 and found[(document.id, -1)].text == "chunk number 1499"
    assert len(store.get_chunks([c.id for c in chunks] * 5)) == 1500


def test_list_and_object_values_never_equal_a_literal(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.bind_space(SPACE)
    document, chunks = make_document("x.md", ["some text"], {"tags": ["a"], "obj": {"k": "v"}})
    store.upsert(document, chunks, vectors_for("x.md", 1))
    for expression in ('tags = "[\\"a\\"]"', 'obj = "{\\"k\\":\\"v\\"}"', 'tags in ("a")'):
        assert store.list_documents(parse_filter(expression)) == [], expression
    assert len(store.list_documents(parse_filter('tags != "a"'))) == 1
    assert len(store.list_documents(parse_filter("tags exists"))) == 1


def test_bm25_tokenizer_is_fixed_at_creation_and_stemming_matters(tmp_path: Path) -> None:
    plain = SQLiteStore(tmp_path / "plain", fts_tokenizer="unicode61 remove_diacritics 2")
    stemmed = SQLiteStore(tmp_path / "stemmed")
    for store in (plain, stemmed):
        store.bind_space(SPACE)
        document, chunks = make_document("r.md", ["the runner was running races"])
        store.upsert(document, chunks, vectors_for("r.md", 1))
    assert stemmed.keyword_search("runs", 5) and not plain.keyword_search("runs", 5)
    with pytest.raises(StoreError, match="fixed"):
        SQLiteStore(tmp_path / "plain", fts_tokenizer="porter unicode61 remove_diacritics 2")
    assert SQLiteStore(tmp_path / "plain").get_setting("fts_tokenizer") == (
        "unicode61 remove_diacritics 2"
    )
    with pytest.raises(StoreError, match="unknown BM25 tokenizer"):
        SQLiteStore(tmp_path / "new", fts_tokenizer="trigram'); DROP TABLE chunks; --")


def test_stop_words_can_be_kept_in_queries(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, stop_words=False)
    store.bind_space(SPACE)
    document, chunks = make_document("w.md", ["to be or not to be"])
    store.upsert(document, chunks, vectors_for("w.md", 1))
    assert [h.source for h in store.keyword_search("to be", 5)] == ["w.md"]
    assert SQLiteStore(tmp_path).keyword_search("to be", 5) == []


class TestSQLiteBackend(BackendContract):
    @pytest.fixture
    def open_backend(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteBackend, tmp_path / "index")


def test_a_new_index_is_private_to_its_owner(tmp_path: Path) -> None:
    """Every local user could read every indexed document when the index was 0755/0644."""
    with SQLiteStore(tmp_path / "private" / "index") as store:
        store.bind_space(SPACE)
        load_corpus(store)
        assert store._db.connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    directory = tmp_path / "private" / "index"
    assert directory.stat().st_mode & 0o777 == 0o700
    files = sorted(directory.glob(DATABASE_NAME + "*"))
    assert files and all(f.stat().st_mode & 0o777 == 0o600 for f in files), files
