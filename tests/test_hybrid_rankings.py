"""A hybrid search ranks both arms in one read snapshot, each candidate's row read once (or,
without the passage-first step, by chunk id alone, reading the whole rows of the hits it keeps);
its results are exactly those of fusing whole hits ranked apart, in every mode."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from ragwright.filters import Filter, parse_filter
from ragwright.models import FTS5_BM25, BM25Parameters, Hit
from ragwright.pipeline.retrieval import Fusion, Retriever, SearchMode, SearchRequest
from ragwright.ports import HybridRankings, IdRankingSearch, Vectors
from ragwright.stores.sqlite import SQLiteStore
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
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return store


QUERIES = ["green tea", "boil water in a kettle", "milk and honey", "mint lemon tea cup"]
REQUESTS = [
    SearchRequest(mode=SearchMode.HYBRID, top_k=10),
    SearchRequest(mode=SearchMode.HYBRID, top_k=1),
    SearchRequest(mode=SearchMode.HYBRID, top_k=25, rrf_k=5),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, vector_weight=2.0),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, fusion=Fusion.CONVEX),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, fusion=Fusion.RRF),
    SearchRequest(mode=SearchMode.HYBRID, top_k=10, where=parse_filter("shelf = 2")),
    SearchRequest(mode=SearchMode.HYBRID, top_k=5, where=parse_filter('origin = "jp"')),
    SearchRequest(mode=SearchMode.VECTOR, top_k=10),
    SearchRequest(mode=SearchMode.BM25, top_k=10, where=parse_filter("shelf != 1")),
]
#: Without the passage-first step hybrid rankings carry chunk ids only (`IdRankingSearch`).
NO_PASSAGE = [
    r.but(passage_coverage_weight=0.0, passage_heading_weight=0.0)
    for r in REQUESTS
    if r.mode is SearchMode.HYBRID
]


@pytest.mark.parametrize("request_", REQUESTS + NO_PASSAGE)
def test_every_mode_gives_exactly_the_whole_hit_results(
    store: SQLiteStore, request_: SearchRequest
) -> None:
    embedder = HashingEmbedder()
    at_once, whole = Retriever(store, embedder), Retriever(WholeHits(store), embedder)
    assert isinstance(store, HybridRankings)
    for query in QUERIES:
        found = at_once.search(query, request_)
        assert found == whole.search(query, request_)  # ids, scores, arms, ranks, chunks
        assert found and all(hit.chunk.text and hit.source for hit in found)


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
        passage_coverage_weight=0.0,
    )
    tied = 0
    for query in QUERIES:
        found = Retriever(store, embedder).search(query, request)
        assert found == Retriever(WholeHits(store), embedder).search(query, request)
        tied += sum(a.score == b.score for a, b in itertools.pairwise(found))
    assert tied  # the fixture has ties, so the order among them was checked


@pytest.mark.parametrize("where", [None, parse_filter("shelf = 2"), parse_filter('origin = "cn"')])
def test_both_arms_ranked_in_one_snapshot_are_the_arms_ranked_apart(
    store: SQLiteStore, where: Filter | None
) -> None:
    embedder = HashingEmbedder()
    for query in [*QUERIES, "the of and"]:  # stop words only: no BM25 ranking
        vector = embedder.embed_query(query)
        keyword, vectors = store.hybrid_rankings(query, vector, 20, where)
        assert keyword == store.keyword_search(query, 20, where)
        assert vectors == store.vector_search(vector, 20, where)
        assert vectors and all(hit.chunk.text and hit.source for hit in keyword + vectors)
    assert store.hybrid_rankings("green tea", embedder.embed_query("tea"), 0) == ([], [])


def test_id_rankings_are_the_rankings_with_chunk_ids_alone(store: SQLiteStore) -> None:
    embedder = HashingEmbedder()
    assert isinstance(store, IdRankingSearch)
    for query in QUERIES:
        vector = embedder.embed_query(query)
        whole = store.hybrid_rankings(query, vector, 20)
        by_id = store.hybrid_id_rankings(query, vector, 20)
        for ranked, bare in zip(whole, by_id, strict=True):
            assert [(h.chunk.id, h.chunk.document_id, h.score, h.arm_ranks) for h in ranked] == [
                (h.chunk.id, h.chunk.document_id, h.score, h.arm_ranks) for h in bare
            ]
            assert all(h.chunk.text == "" and not h.chunk.metadata and not h.source for h in bare)
        fused = whole[0][:3] + whole[1][:3]
        assert store.with_chunks(by_id[0][:3] + by_id[1][:3]) == fused


def test_a_chunk_deleted_after_its_id_ranking_is_dropped(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(embedder.space)
    for source in ("a.md", "b.md"):
        document, chunks = make_document(source, [f"green tea from {source}"])
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    keyword, _ = store.hybrid_id_rankings("green tea", embedder.embed_query("green tea"), 10)
    gone = next(h for h in store.keyword_search("green tea", 10) if h.source == "a.md")
    store.delete(gone.chunk.document_id)
    kept = store.with_chunks(keyword)
    assert [(hit.source, hit.chunk.text) for hit in kept] == [("b.md", "green tea from b.md")]
