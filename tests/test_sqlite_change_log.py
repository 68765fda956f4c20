"""The change log the derived caches replay is pruned once every cache file beside the index
holds its changes, and a cache from before the pruning is rebuilt, never replayed from an
incomplete log."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np

from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES
from ragwright.stores.sqlite.change_log import PRUNED_SETTING
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

WORDS = "tea green steamed leaf kettle pot boil water cup milk sugar honey lemon mint".split()
WHAT = ["green tea", "boil water", "milk honey lemon"]
VECTORS = np.random.default_rng(5).normal(size=(4, SPACE.dimension)).astype(np.float32)


def write(store: SQLiteStore, names: range, seed: int = 0) -> None:
    rng = random.Random(seed)
    for i in names:
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(2, 8))) for _ in range(3)]
        document, chunks = make_document(f"doc{i}.md", texts)
        store.upsert(document, chunks, vectors_for(f"doc{i}.md", len(chunks)))


def answers(store: SQLiteStore) -> object:
    keyword = [[(h.chunk.id, round(h.score, 6)) for h in store.keyword_search(q, 8)] for q in WHAT]
    vector = [[(h.chunk.id, round(h.score, 5)) for h in store.vector_search(v, 8)] for v in VECTORS]
    return keyword, vector


def truth(directory: Path) -> object:
    """What the database alone answers (FTS5's bm25(), a vector matrix read afresh): a copy
    of the database with no cache file beside it."""
    copy = directory / "truth"
    copy.mkdir(exist_ok=True)
    (copy / DATABASE_NAME).unlink(missing_ok=True)
    with (
        sqlite3.connect(directory / DATABASE_NAME) as source,
        sqlite3.connect(copy / DATABASE_NAME) as target,
    ):
        source.backup(target)
    plain = SQLiteStore(copy, keyword_cache=False, background=False, read_only=True)
    try:
        return answers(plain)
    finally:
        plain.close()


def log(directory: Path) -> tuple[int, int, int]:
    """(changes kept, lowest seq kept, pruned-through boundary)."""
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        count, low = db.execute("SELECT count(*), min(seq) FROM chunk_changes").fetchone()
        row = db.execute("SELECT value FROM meta WHERE key = ?", (PRUNED_SETTING,)).fetchone()
    return int(count), int(low or 0), int(row[0]) if row else 0


def test_a_write_prunes_the_changes_every_cache_file_holds(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write(store, range(20))
    logged, _, _ = log(tmp_path)
    answers(store)  # both caches built and saved: their files cover every change so far
    write(store, range(20, 22), seed=1)
    kept, lowest, pruned = log(tmp_path)
    assert (logged, pruned, lowest, kept) == (60, 60, 61, 6)  # the files hold seq 1-60
    assert answers(store) == truth(tmp_path)
    store.close()


def test_nothing_is_pruned_while_a_cache_file_is_missing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, background=False, keyword_cache=False)
    store.bind_space(SPACE)
    write(store, range(5))
    write(store, range(5, 7))  # no cache file yet: the whole log is kept
    assert log(tmp_path)[:2] == (21, 1)
    store.close()


def test_a_cache_from_before_the_pruning_is_rebuilt_not_replayed(tmp_path: Path) -> None:
    old = SQLiteStore(tmp_path, background=False)
    old.bind_space(SPACE)
    write(old, range(10))
    answers(old)  # its caches, in memory and in files, at this point of the log
    other = SQLiteStore(tmp_path, background=False)
    write(other, range(3, 15), seed=2)  # replaced and new documents
    for suffix in CACHE_SUFFIXES:
        (tmp_path / (DATABASE_NAME + suffix)).unlink(missing_ok=True)
    answers(other)  # files again, covering every change
    write(other, range(15, 16), seed=3)  # prunes what the old store's caches would replay
    assert log(tmp_path)[2] > 30
    assert answers(old) == truth(tmp_path)
    old.close()
    other.close()


def test_deleting_the_derived_files_and_reopening_rebuilds_them_with_the_same_answers(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write(store, range(30))
    write(store, range(5, 12), seed=4)
    before = answers(store)
    store.close()
    files = [tmp_path / (DATABASE_NAME + s) for s in CACHE_SUFFIXES]
    for path in files:
        path.unlink(missing_ok=True)
    with SQLiteStore(tmp_path, background=False) as reopened:
        assert answers(reopened) == before == truth(tmp_path)
    assert [p.is_file() for p in files[:2]] == [True, True]
