"""The PostgreSQL store's vector cache: filtered vector and hybrid searches ranked from vectors
held in the process give the hits of ranking in SQL (ids, order and scores), read each vector
once, stay exact through another process's writes, deletes, replacements and moves and a
collection made again (the same row ids, other vectors), and within a budget too small to
hold the matches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from ragwright.filters import Filter, eq, parse_filter
from ragwright.models import EmbeddingSpace, Hit
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.store import PostgresStore
from ragwright.testing.store_contract import make_document, rekeyed

SPACE = EmbeddingSpace("vector-cache-test", 16, True, "cosine", "vector-cache-fingerprint")
WORDS = "oak pine elm yew fir ash".split()
FILTERS: list[Filter] = [
    eq("shelf", 1),
    parse_filter('shelf in (0, 2) and colour = "red"'),
    parse_filter('source in ("doc3.md", "doc7.md", "doc11.md")'),
    eq("shelf", 99),  # matches nothing
]


def _write(store: PostgresStore, first: int, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    writes = []
    for number in range(first, first + count):
        texts = [" ".join(rng.choice(WORDS, 4)) for _ in range(3)]
        metadata = {"shelf": number % 4, "colour": ["red", "blue"][number % 2]}
        document, chunks = make_document(f"doc{number}.md", texts, metadata)
        vectors = rng.standard_normal((len(chunks), SPACE.dimension)).astype(np.float32)
        writes.append(DocumentWrite(document, chunks, vectors))
    store.write(writes)


def _queries(seed: int, count: int = 6) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, SPACE.dimension)).astype(np.float32)


def _ranked(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(h.chunk.id, h.score) for h in hits]


def _same(found: list[Hit], want: list[Hit]) -> None:
    assert [h.chunk.id for h in found] == [h.chunk.id for h in want]
    assert [h.score for h in found] == pytest.approx([h.score for h in want], abs=1e-6)


@pytest.fixture
def stores(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """The same collection opened with the vector cache and without (ranked in SQL)."""
    cached_backend = PostgresBackend(pg_url)
    sql_backend = PostgresBackend(pg_url, vector_cache_mb=0)
    cached, in_sql = cached_backend.open("vc"), sql_backend.open("vc")
    cached.bind_space(SPACE)
    _write(cached, 0, 24, seed=1)
    yield cached, in_sql
    for closing in (cached, in_sql, cached_backend, sql_backend):
        closing.close()


def _check_all(cached: PostgresStore, in_sql: PostgresStore, seed: int) -> None:
    for query in _queries(seed):
        for where in FILTERS:
            _same(cached.vector_search(query, 5, where), in_sql.vector_search(query, 5, where))


def test_filtered_searches_rank_as_sql_does_and_read_the_vectors_once(stores: Any) -> None:
    cached, in_sql = stores
    assert in_sql._vector_cache is None and cached._vector_cache is not None
    _check_all(cached, in_sql, seed=2)
    assert cached.vector_search(_queries(2)[0], 5, eq("shelf", 1))  # not trivially empty
    cached.wait_for_caches()  # the whole load, started by the first filtered search
    held = cached._vector_cache._state
    assert held is not None and held.count == 24 * 3
    _check_all(cached, in_sql, seed=3)  # the same filters' vectors: none read again
    assert cached._vector_cache._state is held


def test_the_cache_stays_exact_through_another_processs_changes(stores: Any, pg_url: str) -> None:
    cached, in_sql = stores
    _check_all(cached, in_sql, seed=4)  # the cache holds the first vectors
    with PostgresBackend(pg_url, vector_cache_mb=0) as other:  # another writer
        writer = other.open("vc")
        for round_ in range(3):
            _write(writer, 100 + 10 * round_, 4, seed=10 + round_)  # new rows
            _write(writer, round_ * 3, 2, seed=20 + round_)  # replaced: new vectors
            gone = writer.find_document(f"doc{12 + round_}.md")
            assert gone is not None
            writer.delete(gone.id)
            moved = writer.find_document(f"doc{16 + round_}.md")
            assert moved is not None
            own = [  # the chunks' own metadata: the document's comes with the move
                replace(c, metadata={"round": round_}) for c in writer.chunks_of(moved.id)
            ]
            # into shelf 1: its rows, kept as matching shelf 0, match another filter now
            document, chunks = rekeyed(moved, own, f"moved{round_}.md", {"shelf": 1})
            assert writer.move_document(moved.id, document, chunks)
            _check_all(cached, in_sql, seed=30 + round_)
            hits = cached.vector_search(_queries(1)[0], 100, eq("shelf", 1))
            assert f"moved{round_}.md" in {h.source for h in hits}
        writer.close()


def test_a_collection_made_again_is_read_again(stores: Any, pg_url: str) -> None:
    """Its rows get the same row ids (a new table's identity starts over) with other vectors:
    the cache knows the table is another and reads them."""
    cached, in_sql = stores
    query = _queries(5)[0]
    before = cached.vector_search(query, 5, eq("shelf", 1))
    with PostgresBackend(pg_url, vector_cache_mb=0) as other:
        other.drop_collection("vc")
        again = other.open("vc")
        again.bind_space(SPACE)
        _write(again, 0, 24, seed=99)
        again.close()
    after = cached.vector_search(query, 5, eq("shelf", 1))
    _same(after, in_sql.vector_search(query, 5, eq("shelf", 1)))
    assert _ranked(after) != _ranked(before)


def test_a_budget_smaller_than_the_matches_still_ranks_exactly(pg_url: str) -> None:
    with PostgresBackend(pg_url, vector_cache_mb=0) as sql_backend:
        in_sql = sql_backend.open("vc")
        in_sql.bind_space(SPACE)
        _write(in_sql, 0, 24, seed=1)
        with PostgresBackend(pg_url) as backend:
            small = backend.open("vc")
            assert small._vector_cache is not None
            small._vector_cache._budget = 10 * SPACE.dimension * 4  # ten vectors
            _check_all(small, in_sql, seed=6)
            small.wait_for_caches()
            state = small._vector_cache._state
            assert state is None or state.count <= 10  # not loaded whole: over the budget
            _check_all(small, in_sql, seed=7)
            small.close()
        in_sql.close()


def test_filtered_hybrid_candidates_equal_those_ranked_in_sql(stores: Any) -> None:
    cached, in_sql = stores
    for store in stores:  # both from the keyword cache: ties in the order written
        store.keyword_search("oak", 1)
        store.wait_for_caches()
    for query in _queries(7, 3):
        for where in FILTERS:
            for text in ("oak pine", "yew"):
                mine = cached.hybrid_candidates(text, query, 5, where)
                want = in_sql.hybrid_candidates(text, query, 5, where)
                assert [(c.chunk_id, c.arms) for c in mine.vector] == [
                    (c.chunk_id, c.arms) for c in want.vector
                ]
                assert [c.score for c in mine.vector] == pytest.approx(
                    [c.score for c in want.vector], abs=1e-6
                )
                assert [c.chunk_id for c in mine.keyword] == [c.chunk_id for c in want.keyword]
                assert [c.score for c in mine.keyword] == pytest.approx(
                    [c.score for c in want.keyword], rel=1e-12
                )
