"""A hybrid search over candidates (`CandidateSearch`: both arms ranked by chunk ids alone in
one read snapshot, the question words each holds from the word postings, whole rows read for
the hits kept) gives exactly the hits of fusing whole hits ranked apart and reordering them
with `PassageFirst`, in every mode: ids, scores, arms, ranks, chunks and sources."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from pathlib import Path

import pytest

from ragwright.filters import Filter, parse_filter
from ragwright.models import FTS5_BM25, Arm, BM25Parameters, Candidate, Chunk, Hit
from ragwright.pipeline.search.request import PassageWeights
from ragwright.pipeline.search.retrieval import Fusion, Retriever, SearchMode, SearchRequest
from ragwright.ports import CandidateSearch, Vectors
from ragwright.stores.sqlite import SQLiteStore
from ragwright.terms import content_words, passage_text
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

WORDS = "tea green steamed leaf kettle pot boil water cup milk sugar honey lemon mint".split()


class WholeHits:
    """The same store seen through the arms alone: the retriever fuses whole hits."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        return self._store.vector_search(query, top_k, where)

    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]:
        return self._store.keyword_search(query, top_k, where, bm25=bm25)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path_factory.mktemp("deferred"), background=False)
    store.bind_space(embedder.space)
    pick = random.Random(7)
    for number in range(40):
        texts = [" ".join(pick.choices(WORDS, k=pick.randint(3, 9))) for _ in range(3)]
        metadata = {"shelf": number % 4, "origin": pick.choice(["jp", "cn"])}
        document, chunks = make_document(f"doc{number}.md", texts, metadata)
        # Headings count among the words the passage step matches (and a heading weight's).
        chunks = [
            replace(chunk, metadata={"heading_path": ["Notes", pick.choice(WORDS)]})
            if pick.random() < 0.5
            else chunk
            for chunk in chunks
        ]
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return store


NO_CONTENT_WORDS = "what is it"  # no passage step; stop words alone for BM25
QUERIES = [
    "green tea",
    "boil water in a kettle",
    "milk and honey",
    "mint lemon tea cup",
    "green tea with ginger",  # ginger is in no chunk: BM25's top hit holds part of the query
    NO_CONTENT_WORDS,
]
REQUESTS = [
    SearchRequest(mode=SearchMode.HYBRID, top_k=10),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, document_share=0.0),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, document_share=0.5, bm25_weight=0.5),
    SearchRequest(mode=SearchMode.HYBRID, top_k=3, arm_depth=40),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, passage=PassageWeights(2.0)),
    # A heading bonus reads headings: the whole-hit path answers, the same way.
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, passage=PassageWeights(heading=0.5)),
    SearchRequest(mode=SearchMode.HYBRID, top_k=1),
    SearchRequest(mode=SearchMode.HYBRID, top_k=25, rrf_k=5),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, vector_weight=2.0),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, fusion=Fusion.CONVEX),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, fusion=Fusion.RRF),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, lexical_pivot=0.9),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, where=parse_filter("shelf = 2")),
    SearchRequest(mode=SearchMode.HYBRID, top_k=5, where=parse_filter('origin = "jp"')),
    SearchRequest(mode=SearchMode.VECTOR, top_k=10),
    SearchRequest(mode=SearchMode.BM25, top_k=10, where=parse_filter("shelf != 1")),
]
#: Without the passage-first step, fusion's own order is kept.
NO_PASSAGE = [
    r.but(passage=PassageWeights(0.0, 0.0)) for r in REQUESTS if r.mode is SearchMode.HYBRID
]


@pytest.mark.parametrize("request_", REQUESTS + NO_PASSAGE)
def test_every_mode_gives_exactly_the_whole_hit_results(
    store: SQLiteStore, request_: SearchRequest
) -> None:
    embedder = HashingEmbedder()
    candidates, whole = Retriever(store, embedder), Retriever(WholeHits(store), embedder)
    assert isinstance(store, CandidateSearch)
    for query in QUERIES:
        found = candidates.search(query, request_)
        assert found == whole.search(query, request_)  # ids, scores, arms, ranks, chunks
        assert all(hit.chunk.text and hit.source for hit in found)
        assert found or query == NO_CONTENT_WORDS  # BM25 alone finds nothing for it


def test_fusion_breaks_ties_by_chunk_id_as_before(store: SQLiteStore) -> None:
    """RRF ties (one hit first in BM25, another first in vectors) are broken by chunk id,
    which the id-only rankings carry."""
    embedder = HashingEmbedder()
    # Fusion's own ties: chunk by chunk, with no passage step reordering them.
    request = SearchRequest(
        mode=SearchMode.HYBRID,
        top_k=40,
        fusion=Fusion.RRF,
        document_share=0.0,
        passage=PassageWeights(0.0),
    )
    tied = 0
    for query in QUERIES:
        found = Retriever(store, embedder).search(query, request)
        assert found == Retriever(WholeHits(store), embedder).search(query, request)
        tied += sum(a.score == b.score for a, b in itertools.pairwise(found))
    assert tied  # the fixture has ties, so the order among them was checked


@pytest.mark.parametrize("where", [None, parse_filter("shelf = 2"), parse_filter('origin = "cn"')])
def test_candidates_are_the_arms_hits_and_hold_their_passages_words(
    store: SQLiteStore, where: Filter | None
) -> None:
    embedder = HashingEmbedder()
    for query in [*QUERIES, "the of and"]:  # stop words only: no BM25 ranking
        vector = embedder.embed_query(query)
        question = frozenset(content_words(query))
        found = store.hybrid_candidates(query, vector, 20, where, question=question)
        keyword, vectors = (
            store.keyword_search(query, 20, where),
            store.vector_search(vector, 20, where),
        )
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
    assert store.hybrid_candidates("green tea", embedder.embed_query("tea"), 0).keyword == []


def words_of(chunk: Chunk) -> set[str]:
    return content_words(passage_text(chunk))


def chunks_of(hits: list[Hit]) -> dict[str, tuple[Chunk, str]]:
    return {hit.chunk.id: (hit.chunk, hit.source) for hit in hits}


def test_kept_chunks_reads_each_whole_chunk_with_its_source(store: SQLiteStore) -> None:
    embedder = HashingEmbedder()
    for query in QUERIES:
        whole = store.keyword_search(query, 5) + store.vector_search(embedder.embed_query(query), 5)
        ids = [hit.chunk.id for hit in whole]
        assert store.kept_chunks(ids) == chunks_of(whole)
        assert list(store.kept_chunks(ids[::-1])) == list(dict.fromkeys(ids[::-1]))  # in order


def test_a_chunk_deleted_after_its_ranking_is_left_out(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(embedder.space)
    for source in ("a.md", "b.md"):
        document, chunks = make_document(source, [f"green tea from {source}"])
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    ranked = store.keyword_search("green tea", 10)
    gone = next(h for h in ranked if h.source == "a.md")
    store.delete(gone.chunk.document_id)
    kept = store.kept_chunks([hit.chunk.id for hit in ranked])
    assert [(source, chunk.text) for chunk, source in kept.values()] == [
        ("b.md", "green tea from b.md")
    ]


def test_kept_chunks_reads_by_row_key_and_never_trusts_a_stale_one(store: SQLiteStore) -> None:
    """The keys of `hybrid_candidates` only speed the read: a key that names another chunk's
    row, or no row, still gives each chunk id its own chunk (looked up by id)."""
    embedder = HashingEmbedder()
    whole = store.keyword_search("green tea", 6)
    keys = store.hybrid_candidates("green tea", embedder.embed_query("green tea"), 6).keys
    ids = [hit.chunk.id for hit in whole]
    assert store.kept_chunks(ids, keys) == chunks_of(whole)
    shifted = {chunk_id: keys[ids[(i + 1) % len(ids)]] for i, chunk_id in enumerate(ids)}
    assert store.kept_chunks(ids, shifted) == chunks_of(whole)
    assert store.kept_chunks(ids, dict.fromkeys(ids, 10**9)) == chunks_of(whole)
