"""The SQLite store's derived files (BM25 postings, vector matrix): never the source of truth.

Every test compares what a store with its caches answers against what the database alone
answers (FTS5's own bm25(), a matrix read afresh), through writes, deletes, reused row ids,
deleted, corrupted and foreign cache files.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.stores.sqlite import (
    DATABASE_NAME,
    SQLiteStore,
    caches,
    candidate_rows,
    derived,
    fts5_postings,
)
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES, KEYWORDS_SUFFIX, VECTORS_SUFFIX
from ragwright.testing.resident import mapped_resident_bytes
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

WORDS = (
    "cell cells protein proteins increase running runner café gene genes expression mouse "
    "mice tumour growth factor signal zebrafish covid_19 the of and risk patients trial dose"
).split()


def write_documents(store: SQLiteStore, rng: random.Random, names: range) -> None:
    for i in names:
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 30))) for _ in range(3)]
        document, chunks = make_document(f"doc{i}.md", texts, {"n": i % 5})
        store.upsert(document, chunks, vectors_for(f"doc{i}.md", len(chunks)))


def keyword_answers(store: SQLiteStore, queries: list[str]) -> list[list[tuple[str, float]]]:
    return [[(h.chunk.id, round(h.score, 6)) for h in store.keyword_search(q, 12)] for q in queries]


def vector_answers(store: SQLiteStore, queries: np.ndarray) -> list[list[tuple[str, float]]]:
    return [[(h.chunk.id, round(h.score, 5)) for h in store.vector_search(q, 12)] for q in queries]


def truth(directory: Path, queries: list[str], vectors: np.ndarray) -> tuple[object, object]:
    """What the database alone answers: FTS5's bm25(), and a vector matrix read afresh."""
    (directory / (DATABASE_NAME + VECTORS_SUFFIX)).unlink(missing_ok=True)
    plain = SQLiteStore(directory, keyword_cache=False)
    try:
        return keyword_answers(plain, queries), vector_answers(plain, vectors)
    finally:
        plain.close()


def in_a_file(array: np.ndarray | None) -> bool:
    """Whether ``array`` reads a memory-mapped file (rather than memory of its own)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = array.base if isinstance(array.base, np.ndarray) else None
    return False


def cache_file(directory: Path, suffix: str) -> Path:
    return directory / (DATABASE_NAME + suffix)


@pytest.fixture
def queries() -> list[str]:
    rng = random.Random(3)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 5))) for _ in range(25)]


@pytest.fixture
def vectors() -> np.ndarray:
    return np.random.default_rng(5).normal(size=(10, SPACE.dimension)).astype(np.float32)


def test_caches_follow_every_write_and_delete_with_the_database(
    tmp_path: Path, queries: list[str], vectors: np.ndarray
) -> None:
    rng = random.Random(11)
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write_documents(store, rng, range(40))
    for step in range(6):
        cached = keyword_answers(store, queries), vector_answers(store, vectors)
        assert cached == truth(tmp_path, queries, vectors), step
        listed = store.list_documents()
        for info in rng.sample(listed, 5):  # the last document too: SQLite reuses its row ids
            store.delete(info.id)
        store.delete(max(listed, key=lambda d: d.source).id)
        write_documents(store, rng, range(100 + step * 10, 106 + step * 10))
        write_documents(store, rng, range(0, 3))  # replaced documents: new text, same source
    store.close()


def test_deleted_cache_files_are_rebuilt_with_the_same_answers(
    tmp_path: Path, queries: list[str], vectors: np.ndarray
) -> None:
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write_documents(store, random.Random(1), range(60))
    before = keyword_answers(store, queries), vector_answers(store, vectors)
    store.close()
    for suffix in (KEYWORDS_SUFFIX, VECTORS_SUFFIX):
        assert cache_file(tmp_path, suffix).stat().st_size > 0
        cache_file(tmp_path, suffix).unlink()
    reopened = SQLiteStore(tmp_path, background=False)
    assert (keyword_answers(reopened, queries), vector_answers(reopened, vectors)) == before
    assert all(cache_file(tmp_path, s).is_file() for s in (KEYWORDS_SUFFIX, VECTORS_SUFFIX))


@pytest.mark.parametrize("suffix", [KEYWORDS_SUFFIX, VECTORS_SUFFIX])
@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_a_damaged_cache_file_is_detected_and_rebuilt(
    tmp_path: Path, queries: list[str], vectors: np.ndarray, suffix: str, damage: str
) -> None:
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write_documents(store, random.Random(2), range(50))
    before = keyword_answers(store, queries), vector_answers(store, vectors)
    store.close()
    path = cache_file(tmp_path, suffix)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-7] ^= 0x10  # one bit of the last array
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = bytearray(b"not a cache" * 10)
    path.write_bytes(bytes(data))
    reopened = SQLiteStore(tmp_path, background=False)
    assert (keyword_answers(reopened, queries), vector_answers(reopened, vectors)) == before
    assert path.read_bytes() != bytes(data)  # rewritten, not trusted


def test_a_stale_or_foreign_cache_file_is_never_trusted(
    tmp_path: Path, queries: list[str], vectors: np.ndarray
) -> None:
    rng = random.Random(4)
    other = SQLiteStore(tmp_path / "other", background=False)
    other.bind_space(SPACE)
    write_documents(other, rng, range(30))
    keyword_answers(other, queries)
    vector_answers(other, vectors)
    store = SQLiteStore(tmp_path / "index", background=False)
    store.bind_space(SPACE)
    write_documents(store, rng, range(30))
    keyword_answers(store, queries)
    vector_answers(store, vectors)
    old = {
        s: cache_file(tmp_path / "index", s).read_bytes() for s in (KEYWORDS_SUFFIX, VECTORS_SUFFIX)
    }
    store.delete(store.list_documents()[0].id)
    write_documents(store, rng, range(30, 45))
    expected = truth(tmp_path / "index", queries, vectors)
    store.close()
    for suffix, content in old.items():  # a file from before the last writes: caught up
        cache_file(tmp_path / "index", suffix).write_bytes(content)
    stale = SQLiteStore(tmp_path / "index", background=False)
    assert (keyword_answers(stale, queries), vector_answers(stale, vectors)) == expected
    stale.close()
    for suffix in (KEYWORDS_SUFFIX, VECTORS_SUFFIX):  # another index's files: ignored
        shutil.copy(cache_file(tmp_path / "other", suffix), cache_file(tmp_path / "index", suffix))
    foreign = SQLiteStore(tmp_path / "index", background=False)
    assert (keyword_answers(foreign, queries), vector_answers(foreign, vectors)) == expected


def test_fts5_answers_while_the_keyword_cache_is_built_in_the_background(
    tmp_path: Path, queries: list[str]
) -> None:
    store = SQLiteStore(tmp_path)
    store.bind_space(SPACE)
    write_documents(store, random.Random(6), range(80))
    plain = SQLiteStore(tmp_path, keyword_cache=False)
    expected = keyword_answers(plain, queries)
    assert keyword_answers(store, queries[:1]) == expected[:1]  # FTS5, or the cache if fast
    store.wait_for_caches()
    assert cache_file(tmp_path, KEYWORDS_SUFFIX).is_file()
    assert keyword_answers(store, queries) == expected
    write_documents(store, random.Random(7), range(80, 90))  # caught up in the query
    assert keyword_answers(store, queries) == keyword_answers(plain, queries)


@pytest.mark.parametrize("background", [False, True])
def test_many_changes_compact_the_cache_into_a_new_file(
    tmp_path: Path, queries: list[str], background: bool
) -> None:
    store = SQLiteStore(tmp_path, background=background)
    store.bind_space(SPACE)
    rng = random.Random(8)
    write_documents(store, rng, range(20))
    keyword_answers(store, queries)
    store.wait_for_caches()
    first = cache_file(tmp_path, KEYWORDS_SUFFIX).read_bytes()
    write_documents(store, rng, range(20, 420))  # 1,200 chunk rows: past the threshold
    plain = SQLiteStore(tmp_path, keyword_cache=False)
    assert keyword_answers(store, queries) == keyword_answers(plain, queries)
    store.wait_for_caches()  # in the background: compacted by the worker
    assert keyword_answers(store, queries) == keyword_answers(plain, queries)
    assert cache_file(tmp_path, KEYWORDS_SUFFIX).read_bytes() != first
    reopened = SQLiteStore(tmp_path, background=False)
    assert keyword_answers(reopened, queries) == keyword_answers(plain, queries)


@pytest.mark.parametrize("in_query", [True, False])
@pytest.mark.parametrize("suffix", [KEYWORDS_SUFFIX, VECTORS_SUFFIX])
def test_a_serving_store_never_answers_from_a_damaged_file(
    tmp_path: Path,
    queries: list[str],
    vectors: np.ndarray,
    suffix: str,
    in_query: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file's hashes are checked before its first use: in the query (a small file, or the
    vectors, which have no fallback) or in the background while FTS5 answers (a large BM25
    file, here every file); the damaged file is deleted and built again."""
    if not in_query:
        monkeypatch.setattr(caches, "VERIFIED_IN_QUERY", 0)
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write_documents(store, random.Random(2), range(50))
    before = keyword_answers(store, queries), vector_answers(store, vectors)
    store.close()
    path = cache_file(tmp_path, suffix)
    data = bytearray(path.read_bytes())
    for at in random.Random(3).sample(range(len(data) // 2, len(data)), 20):
        data[at] ^= 0xFF  # 20 bytes of the data (postings, vectors)
    path.write_bytes(bytes(data))
    serving = SQLiteStore(tmp_path)
    assert (keyword_answers(serving, queries), vector_answers(serving, vectors)) == before
    serving.wait_for_caches()
    assert (keyword_answers(serving, queries), vector_answers(serving, vectors)) == before
    serving.wait_for_caches()
    assert path.read_bytes() != bytes(data)  # deleted and built again
    assert derived.read_arrays(path) is not None


@pytest.mark.parametrize("in_query", [True, False])
def test_a_serving_store_answers_from_intact_files_once_checked(
    tmp_path: Path,
    queries: list[str],
    vectors: np.ndarray,
    in_query: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not in_query:
        monkeypatch.setattr(caches, "VERIFIED_IN_QUERY", 0)
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    write_documents(store, random.Random(6), range(40))
    before = keyword_answers(store, queries), vector_answers(store, vectors)
    store.close()
    saved = {s: cache_file(tmp_path, s).read_bytes() for s in (KEYWORDS_SUFFIX, VECTORS_SUFFIX)}
    serving = SQLiteStore(tmp_path)
    assert (keyword_answers(serving, queries), vector_answers(serving, vectors)) == before
    serving.wait_for_caches()
    assert (keyword_answers(serving, queries), vector_answers(serving, vectors)) == before
    assert serving._search._keywords is not None and serving._search._keywords.latest is not None
    assert in_a_file(serving._search._keywords.latest.lengths)  # served from the file, once checked
    assert {s: cache_file(tmp_path, s).read_bytes() for s in saved} == saved  # kept


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads Linux's smaps")
def test_searches_give_back_the_pages_they_read_from_large_cache_files(
    tmp_path: Path, queries: list[str], vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(tmp_path, background=False) as store:
        store.bind_space(SPACE)
        write_documents(store, random.Random(7), range(40))
        before = keyword_answers(store, queries), vector_answers(store, vectors)
    monkeypatch.setattr(derived, "RELEASED_BYTES", 0)  # every file counts as large
    with SQLiteStore(tmp_path, background=False) as serving:
        assert (keyword_answers(serving, queries), vector_answers(serving, vectors)) == before
        assert (
            serving._search._keywords is not None and serving._search._keywords.latest is not None
        )
        left = mapped_resident_bytes(tmp_path)
    assert all(left.get(DATABASE_NAME + s, 0) == 0 for s in (KEYWORDS_SUFFIX, VECTORS_SUFFIX))


@pytest.mark.parametrize("background", [False, True])
def test_a_cache_the_store_builds_is_served_from_the_file_it_wrote(
    tmp_path: Path, queries: list[str], vectors: np.ndarray, background: bool
) -> None:
    """Once saved, a built cache is read in place from its file, as one opened later is: the
    memory it was built in is freed (1.5 GB of vectors at a million chunks), and the
    answers are those of the database."""
    with SQLiteStore(tmp_path, background=False) as writer:
        writer.bind_space(SPACE)
        write_documents(writer, random.Random(8), range(40))
    for suffix in (KEYWORDS_SUFFIX, VECTORS_SUFFIX):
        cache_file(tmp_path, suffix).unlink(missing_ok=True)
    with SQLiteStore(tmp_path, background=background) as store:
        keyword_answers(store, queries)  # builds the caches (the keyword one in the
        vector_answers(store, vectors)  # background, if the store builds there)
        store.wait_for_caches()
        answered = keyword_answers(store, queries), vector_answers(store, vectors)
        assert store._search._keywords is not None and store._search._vectors is not None
        for cache in (store._search._keywords.latest, store._search._vectors.latest):
            assert cache is not None
            assert all(in_a_file(a) for a in cache.arrays().values() if a.size)
    assert answered == truth(tmp_path, queries, vectors)


def test_a_stores_background_builds_from_the_database_run_one_at_a_time(
    tmp_path: Path, queries: list[str], vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword and candidate rows caches, both missing, are built one after the other
    (each build holds its whole cache in memory while it runs), and then both serve."""
    with SQLiteStore(tmp_path, background=False) as writer:
        writer.bind_space(SPACE)
        write_documents(writer, random.Random(9), range(40))
    for suffix in CACHE_SUFFIXES:
        cache_file(tmp_path, suffix).unlink(missing_ok=True)
    running: list[str] = []
    together: list[int] = []
    guard = threading.Lock()

    def counted(name: str, build: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            with guard:
                running.append(name)
                together.append(len(running))
            time.sleep(0.3)  # room for another build to start beside it, were it let
            try:
                return build(*args, **kwargs)
            finally:
                with guard:
                    running.remove(name)

        return run

    monkeypatch.setattr(fts5_postings, "load", counted("bm25", fts5_postings.load))
    monkeypatch.setattr(candidate_rows, "load", counted("candidates", candidate_rows.load))
    with SQLiteStore(tmp_path) as store:
        store.hybrid_candidates(queries[0], vectors[0], 10)  # starts both builds
        store.wait_for_caches()
        store.hybrid_candidates(queries[0], vectors[0], 10)  # takes what they handed over
        assert store._search._keywords is not None and store._search._keywords.latest is not None
        assert (
            store._search._candidates is not None and store._search._candidates.latest is not None
        )
    assert together == [1, 1]
