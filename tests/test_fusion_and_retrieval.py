from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.filters import parse_filter
from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.pipeline.search.fusion import convex_combination, reciprocal_rank_fusion
from ragwright.pipeline.search.retrieval import Retriever, SearchRequest, arm_depth
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document


def hit(chunk_id: str, arm: Arm, score: float = 1.0) -> Hit:
    chunk = Chunk(chunk_id, "doc", 0, "text", 0, 4)
    scale = Scale.BM25 if arm is Arm.BM25 else Scale.SIMILARITY
    return Hit(chunk, score, scale, frozenset({arm}), source=f"{chunk_id}.md")


def test_rrf_sums_reciprocal_ranks_across_arms() -> None:
    bm25 = [hit("a", Arm.BM25), hit("b", Arm.BM25), hit("c", Arm.BM25)]
    vector = [hit("c", Arm.VECTOR), hit("d", Arm.VECTOR)]
    fused = reciprocal_rank_fusion([bm25, vector], k=60)
    assert [h.chunk.id for h in fused] == ["c", "a", "b", "d"]  # b, d tie: id breaks it
    assert fused[2].score == fused[3].score == pytest.approx(1 / 62)
    c = fused[0]
    assert c.score == pytest.approx(1 / 63 + 1 / 61)
    assert c.scale is Scale.RANK
    assert c.arms == {Arm.BM25, Arm.VECTOR}
    assert dict(c.arm_ranks) == {Arm.BM25: 3, Arm.VECTOR: 1}
    assert fused[1].arms == {Arm.BM25}


def test_rrf_weights_and_k_change_the_order() -> None:
    bm25 = [hit("a", Arm.BM25), hit("b", Arm.BM25)]
    vector = [hit("b", Arm.VECTOR), hit("a", Arm.VECTOR)]
    weighted = reciprocal_rank_fusion([bm25, vector], weights={Arm.VECTOR: 2.0})
    assert [h.chunk.id for h in weighted] == ["b", "a"]


def test_arm_depth_is_twice_top_k_but_at_least_twenty() -> None:
    assert (arm_depth(1), arm_depth(10), arm_depth(25)) == (20, 20, 50)


@pytest.fixture
def retriever(tmp_path: Path) -> Retriever:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path)
    store.bind_space(embedder.space)
    corpus = {
        "install.md": ["install the package with pip", "linux needs a compiler"],
        "search.md": ["hybrid search fuses bm25 and vectors", "filters narrow results"],
        "cats.md": ["cats sleep most of the day"],
    }
    for source, texts in corpus.items():
        document, chunks = make_document(source, texts, {"topic": source[:-3]})
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return Retriever(store, embedder)


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_every_arm_mode_finds_the_matching_chunk(retriever: Retriever, mode: str) -> None:
    hits = retriever.search("how do I install the package", SearchRequest(mode=mode, top_k=3))
    assert hits[0].chunk.text == "install the package with pip"
    assert len(hits) <= 3


@pytest.mark.parametrize("mode", ["graph", "global", "auto"])
def test_a_bare_retriever_refuses_the_modes_that_search_on_their_own(
    retriever: Retriever, mode: str
) -> None:
    """Graph and global search (and auto's routing) need the index: a `Retriever` has only
    the arms, and says so instead of answering with one of them."""
    with pytest.raises(ConfigError, match=f"mode {mode}"):
        retriever.search("install", SearchRequest(mode=mode))


def test_hybrid_hits_say_which_arms_found_them(retriever: Retriever) -> None:
    hits = retriever.search("hybrid search bm25", SearchRequest(mode="hybrid", top_k=5))
    assert hits[0].arms == {Arm.BM25, Arm.VECTOR}
    assert all(h.scale is Scale.RANK for h in hits)


def test_min_score_filters_raw_scales_and_is_refused_on_fused_ranks(
    retriever: Retriever,
) -> None:
    all_hits = retriever.search("cats sleep", SearchRequest(mode="vector", top_k=5))
    kept = retriever.search("cats sleep", SearchRequest(mode="vector", top_k=5, min_score=0.5))
    assert kept and all(h.score >= 0.5 for h in kept) and len(kept) < len(all_hits)
    with pytest.raises(UnsupportedScale, match="rank"):
        retriever.search("cats", SearchRequest(mode="hybrid", min_score=0.5))


def test_filters_reach_both_arms(retriever: Retriever) -> None:
    where = parse_filter('topic = "search"')
    hits = retriever.search(
        "install the package", SearchRequest(mode="hybrid", top_k=5, where=where)
    )
    assert hits and {h.source for h in hits} == {"search.md"}


def test_query_vector_skips_embedding(retriever: Retriever) -> None:
    vector = retriever.embedder.embed_query("cats sleep")
    hits = retriever.search(
        "ignored words", SearchRequest(mode="vector", top_k=1), query_vector=vector
    )
    assert hits[0].source == "cats.md"


def test_bad_arguments_are_config_errors(retriever: Retriever) -> None:
    with pytest.raises(ConfigError, match="bm25, vector, hybrid"):
        retriever.search("x", SearchRequest(mode="semantic"))
    with pytest.raises(ConfigError):
        retriever.search("x", SearchRequest(top_k=0))
    assert np.isfinite(retriever.embedder.embed_query("x")).all()


def scored(chunk_id: str, arm: Arm, score: float) -> Hit:
    return hit(chunk_id, arm, score)


def test_convex_combination_uses_normalized_score_gaps() -> None:
    bm25 = [scored("a", Arm.BM25, 10.0), scored("b", Arm.BM25, 9.9), scored("c", Arm.BM25, 1.0)]
    vector = [
        scored("c", Arm.VECTOR, 0.9),
        scored("b", Arm.VECTOR, 0.5),
        scored("a", Arm.VECTOR, 0.1),
    ]
    fused = convex_combination([bm25, vector])
    # b is near the top of BM25 and mid-way in vectors: 0.989 + 0.5 beats a (1 + 0) and c (0 + 1)
    assert [h.chunk.id for h in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(8.9 / 9.0 + 0.5)
    assert fused[0].scale is Scale.RANK
    weighted = convex_combination([bm25, vector], weights={Arm.BM25: 0.2, Arm.VECTOR: 1.0})
    assert weighted[0].chunk.id == "c"


def test_the_request_carries_the_fusion_options(retriever: Retriever) -> None:
    rrf = retriever.search("install the package", SearchRequest(top_k=2, fusion="rrf"))
    assert rrf[0].chunk.text.startswith("install")
    assert SearchRequest(top_k=3).depth == arm_depth(3)
    assert SearchRequest(top_k=3, arm_depth=1).depth == 3  # never fewer than top_k
    assert SearchRequest(top_k=3, arm_depth=7).depth == 7
    # With the vector arm weighed 0, hybrid ranks BM25's candidates first, in BM25's order.
    bm25_only = SearchRequest(top_k=3, fusion="rrf", vector_weight=0.0)
    fused = retriever.search("install the package", bm25_only)
    bm25 = retriever.search("install the package", SearchRequest(mode="bm25", top_k=3))
    assert [hit.chunk.id for hit in fused][: len(bm25)] == [hit.chunk.id for hit in bm25]
    with pytest.raises(ConfigError, match="rrf, convex"):
        SearchRequest(fusion="max")
    with pytest.raises(ConfigError, match="bm25_weight must be a number >= 0"):
        SearchRequest(bm25_weight=-1.0)
    with pytest.raises(ConfigError, match="rrf_k must be a positive integer"):
        SearchRequest(rrf_k=0)
    with pytest.raises(ConfigError, match="arm_depth"):
        SearchRequest(arm_depth=-1)
