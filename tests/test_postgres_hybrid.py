"""Hybrid search on PostgreSQL over candidates (`CandidateSearch`: both arms in one read
snapshot, the vector arm's path chosen inside its statement) gives exactly the hits of fusing
the two arms' whole hits ranked apart, from the keyword cache and from SQL, with and without
filters, on the exact path and through the HNSW index."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from pg_server import create_database, drop_database
from ragwright.filters import parse_filter
from ragwright.models import Arm, Candidate
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.ports import CandidateSearch
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.store import PostgresStore
from ragwright.terms import content_words
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document
from test_candidate_hybrid import QUERIES, REQUESTS, WholeHits, words_of

WORDS = "tea green steamed leaf kettle pot boil water cup milk sugar honey lemon mint".split()


@pytest.fixture(scope="module")
def pg_database(pg_server: Any) -> Iterator[str]:
    url = create_database(pg_server)
    backend = PostgresBackend(url)
    store = backend.open("hybrid")
    embedder = HashingEmbedder()
    store.bind_space(embedder.space)
    pick = random.Random(7)
    for number in range(40):
        texts = [" ".join(pick.choices(WORDS, k=pick.randint(3, 9))) for _ in range(3)]
        metadata = {"shelf": number % 4, "origin": pick.choice(["jp", "cn"])}
        document, chunks = make_document(f"doc{number}.md", texts, metadata)
        chunks = [
            replace(chunk, metadata={"heading_path": ["Notes", pick.choice(WORDS)]})
            if pick.random() < 0.5
            else chunk
            for chunk in chunks
        ]
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    store.close()
    backend.close()
    yield url
    drop_database(pg_server, url)


#: The keyword cache or BM25 in SQL; exact vector ranking (a filter's matches from the vector
#: cache, or in SQL) or the HNSW index (``exact_limit`` 0: every search with candidates goes
#: through the index).
SETTINGS = [
    {"keyword_cache": True, "exact_limit": 20_000},
    {"keyword_cache": False, "exact_limit": 20_000},
    {"keyword_cache": True, "exact_limit": 0},
    {"keyword_cache": True, "exact_limit": 20_000, "vector_cache_mb": 0},
]


@pytest.fixture(
    params=SETTINGS, ids=["cache-exact", "sql-exact", "cache-index", "cache-exact-sql-vectors"]
)
def store(pg_database: str, request: pytest.FixtureRequest) -> Iterator[PostgresStore]:
    backend = PostgresBackend(pg_database, **request.param)
    opened = backend.open("hybrid")
    opened.keyword_search("tea", 1)
    opened.wait_for_caches()
    yield opened
    opened.close()
    backend.close()


def test_every_mode_gives_exactly_the_whole_hit_results(store: PostgresStore) -> None:
    embedder = HashingEmbedder()
    whole = Retriever(WholeHits(store), embedder)  # type: ignore[arg-type]
    candidates = Retriever(store, embedder)
    assert isinstance(store, CandidateSearch)
    for request_ in REQUESTS:
        for query in QUERIES:
            found = candidates.search(query, request_)
            assert found == whole.search(query, request_), (request_, query)
            assert all(hit.chunk.text and hit.source for hit in found)


@pytest.mark.parametrize("where", [None, "shelf = 2", 'origin = "cn"', "shelf = 9"])
def test_candidates_are_the_arms_hits_and_hold_their_passages_words(
    store: PostgresStore, where: str | None
) -> None:
    embedder = HashingEmbedder()
    condition = None if where is None else parse_filter(where)
    for query in [*QUERIES, "the of and"]:  # stop words only: no BM25 ranking
        vector = embedder.embed_query(query)
        question = frozenset(content_words(query))
        found = store.hybrid_candidates(query, vector, 20, condition, question=question)
        keyword = store.keyword_search(query, 20, condition)
        vectors = store.vector_search(vector, 20, condition)
        assert found.keyword == [
            Candidate(h.chunk.id, h.chunk.document_id, h.score, (Arm.BM25,)) for h in keyword
        ]
        assert found.vector == [
            Candidate(h.chunk.id, h.chunk.document_id, h.score, (Arm.VECTOR,)) for h in vectors
        ]
        chunks = {hit.chunk.id: hit.chunk for hit in keyword + vectors}
        assert {word: sorted(ids) for word, ids in found.holders.items()} == {
            word: sorted(c for c, chunk in chunks.items() if word in words_of(chunk))
            for word in question
        }
        ids = [hit.chunk.id for hit in keyword + vectors]
        kept = {h.chunk.id: (h.chunk, h.source) for h in keyword + vectors}
        assert store.kept_chunks(ids) == kept


def test_a_kept_chunk_deleted_after_its_ranking_is_left_out(pg_url: str) -> None:
    embedder = HashingEmbedder()
    backend = PostgresBackend(pg_url)
    store = backend.open()
    store.bind_space(embedder.space)
    for source in ("a.md", "b.md"):
        document, chunks = make_document(source, [f"green tea from {source}"])
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    found = store.hybrid_candidates("green tea", embedder.embed_query("green tea"), 10)
    ids = [c.chunk_id for c in found.keyword]
    gone = next(c for c in found.keyword if c.chunk_id == ids[0])
    store.delete(gone.document_id)
    assert list(store.kept_chunks(ids)) == ids[1:]
    hits = Retriever(store, embedder).search("green tea", SearchRequest(mode=SearchMode.HYBRID))
    assert [hit.chunk.id for hit in hits] == ids[1:]
    store.close()
    backend.close()


def test_vectors_are_stored_in_their_rows(pg_database: str) -> None:
    """The vector column keeps its values in the row (`STORAGE MAIN`): pgvector's default
    moves them out of line once a row passes ~2 kB, and an exact ranking then reads each one
    from the TOAST table."""
    import psycopg

    with psycopg.connect(pg_database) as conn:
        row = conn.execute(
            "SELECT attstorage FROM pg_attribute "
            "WHERE attrelid = 'ragwright_hybrid.chunks'::regclass AND attname = 'embedding'"
        ).fetchone()
    assert row == ("m",)


@pytest.mark.parametrize("where", [None, "shelf = 1"])
def test_a_steady_cache_still_sees_another_writers_change(pg_url: str, where: str | None) -> None:
    """Once a search found nothing changed, the next ranks its keyword arm from the cache in
    the round trip that reads the change log (`KeywordCache.steady`); a change another
    writer made meanwhile is still found, by hybrid and keyword searches alike."""
    embedder = HashingEmbedder()
    condition = None if where is None else parse_filter(where)
    backend = PostgresBackend(pg_url)
    store = backend.open("steady")
    store.bind_space(embedder.space)
    for number in range(6):
        document, chunks = make_document(f"d{number}.md", ["tea" + " leaf" * number], {"shelf": 1})
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    store.keyword_search("tea", 1)
    store.wait_for_caches()
    cache = store._keyword_cache
    assert cache is not None
    vector = embedder.embed_query("kettle tea")
    other = PostgresBackend(pg_url, keyword_cache=False)  # another writer, BM25 in SQL
    writer = other.open("steady")
    for search in ("hybrid", "keyword"):
        for _ in range(2):  # the first reads the log first and finds nothing changed
            store.hybrid_candidates("kettle tea", vector, 5, condition)
        assert cache.steady() is not None
        document, chunks = make_document(f"{search}.md", ["kettle kettle tea"], {"shelf": 1})
        writer.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
        if search == "hybrid":
            found = [
                c.chunk_id
                for c in store.hybrid_candidates("kettle tea", vector, 5, condition).keyword
            ]
        else:
            found = [h.chunk.id for h in store.keyword_search("kettle tea", 5, condition)]
        assert found == [h.chunk.id for h in writer.keyword_search("kettle tea", 5, condition)]
        assert chunks[0].id in found
    writer.close()
    other.close()
    store.close()
    backend.close()
