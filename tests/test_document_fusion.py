"""Fusion by document (``document_share``): a chunk takes a share of its document's best
contribution in each arm, so a document found by one chunk in BM25 and another in vectors
gets both arms' evidence."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from cli_helpers import ingest_sample_docs, runner
from ragwright.cli import app
from ragwright.errors import ConfigError
from ragwright.evaluation import EvalConfig
from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.pipeline.search.fusion import (
    convex_combination,
    reciprocal_rank_fusion,
    zscore_combination,
)
from ragwright.pipeline.search.request import PassageWeights
from ragwright.pipeline.search.retrieval import Fusion, Retriever, SearchRequest
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document


def hit(chunk_id: str, document: str, arm: Arm, score: float) -> Hit:
    chunk = Chunk(chunk_id, document, 0, "text", 0, 4)
    scale = Scale.BM25 if arm is Arm.BM25 else Scale.SIMILARITY
    return Hit(chunk, score, scale, frozenset({arm}), source=f"{document}.md")


# Document x is BM25's best by chunk x1 and nearly vectors' best by chunk x2; chunk y1 is second
# in BM25 and first in vectors. Min-max normalized: x1 1, y1 0.8 | y1 1, x2 0.9375.
BM25 = [hit("x1", "x", Arm.BM25, 1.0), hit("y1", "y", Arm.BM25, 0.8), hit("w", "w", Arm.BM25, 0.0)]
VECTOR = [
    hit("y1", "y", Arm.VECTOR, 0.9),
    hit("x2", "x", Arm.VECTOR, 0.85),
    hit("w", "w", Arm.VECTOR, 0.1),
]


def order(hits: list[Hit]) -> list[str]:
    return [h.chunk.id for h in hits]


def test_chunk_by_chunk_fusion_splits_a_documents_evidence() -> None:
    fused = convex_combination([BM25, VECTOR], document_share=0.0)
    assert order(fused) == ["y1", "x1", "x2", "w"]
    assert fused[0].score == pytest.approx(1.8)


def test_fusion_by_document_adds_both_arms_evidence() -> None:
    fused = convex_combination([BM25, VECTOR], document_share=1.0)
    # x1, x's leading chunk, scores x's best in each arm (1 + 0.9375); x2 keeps its own.
    assert order(fused) == ["x1", "y1", "x2", "w"]
    assert [h.score for h in fused[:3]] == pytest.approx([1.9375, 1.8, 0.9375])
    # A lifted chunk keeps the arms that actually returned it.
    assert fused[0].arms == {Arm.BM25} and fused[2].arms == {Arm.VECTOR}


def test_a_strong_documents_weak_chunk_is_not_lifted() -> None:
    bm25 = [*BM25, hit("x3", "x", Arm.BM25, 0.05)]
    fused = convex_combination([bm25, VECTOR], document_share=1.0)
    scores = {h.chunk.id: h.score for h in fused}
    assert scores["x3"] == pytest.approx(0.05)  # its own: the leader x1 carries x's evidence
    assert order(fused).index("x3") > order(fused).index("y1")


def test_a_partial_share_lifts_a_chunk_part_way() -> None:
    fused = convex_combination([BM25, VECTOR], document_share=0.5)
    assert order(fused)[0] == "y1"
    scores = {h.chunk.id: h.score for h in fused}
    assert scores["x1"] == pytest.approx(1.0 + 0.5 * 0.9375)
    assert scores["x2"] == pytest.approx(0.9375)


def test_rrf_fuses_by_document_too() -> None:
    by_chunk = reciprocal_rank_fusion([BM25, VECTOR], k=60)
    by_document = reciprocal_rank_fusion([BM25, VECTOR], k=60, document_share=1.0)
    alone = {h.chunk.id: h.score for h in by_chunk}
    assert order(by_chunk)[0] == "y1"
    assert alone["x1"] == pytest.approx(1 / 61)  # BM25's first, alone
    # By document, x1 adds BM25's rank 1 and x2's rank 2 in vectors, as y1 does the reverse.
    scores = {h.chunk.id: h.score for h in by_document}
    assert scores["x1"] == pytest.approx(scores["y1"])
    assert scores["x1"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["x2"] == pytest.approx(1 / 62)


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_fusion_refuses_a_share_outside_zero_to_one(share: float) -> None:
    with pytest.raises(ConfigError, match="document_share"):
        convex_combination([BM25, VECTOR], document_share=share)


def test_the_request_defaults_to_fusion_by_document_and_validates_the_share() -> None:
    assert SearchRequest().document_share == 1.0
    assert SearchRequest().settings()["document_share"] == 1.0
    assert SearchRequest.from_mapping({"document_share": 0}).document_share == 0.0
    for bad in (-1, 1.01, "1", True, None):
        with pytest.raises(ConfigError, match="document_share"):
            SearchRequest.from_mapping({"document_share": bad})


def test_eval_configurations_take_the_share() -> None:
    config = EvalConfig.from_mapping({"name": "by-chunk", "document_share": 0.25})
    assert config.search.document_share == 0.25
    with pytest.raises(ConfigError, match="document_share"):
        EvalConfig.from_mapping({"document_share": 2})


@pytest.fixture
def retriever(tmp_path: Path) -> Retriever:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path)
    store.bind_space(embedder.space)
    # a.md's first chunk holds the rare query word (BM25's best), its second only the common
    # one, alone (vectors' best: the hashing embedder weighs no word by rarity).
    corpus = {
        "a.md": ["alpha beta beta beta", "gamma"],
        "b.md": ["gamma one two"],
        "c.md": ["gamma three four"],
        "d.md": ["gamma five six"],
    }
    for source, texts in corpus.items():
        document, chunks = make_document(source, texts, {})
        store.upsert(document, chunks, embedder.embed_documents([c.text for c in chunks]))
    return Retriever(store, embedder)


def test_the_retriever_fuses_as_the_request_says(retriever: Retriever) -> None:
    def scores(share: float) -> dict[str, float]:
        # fused scores as fusion gives them (no passage step rescoring them after)
        request = SearchRequest(top_k=10, document_share=share, passage=PassageWeights(0.0))
        return {h.chunk.text: h.score for h in retriever.search("alpha gamma", request)}

    by_chunk, by_document = scores(0.0), scores(1.0)
    first, second = "alpha beta beta beta", "gamma"
    leader, other = sorted((first, second), key=lambda text: -by_chunk[text])
    assert by_chunk[leader] > by_chunk[other]
    # a.md's leading chunk takes a.md's best in each arm, above its own; the other keeps its own.
    assert by_document[leader] > by_chunk[leader]
    assert by_document[other] == pytest.approx(by_chunk[other])


def test_search_and_ask_take_the_share_from_the_flag_and_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    for command in (["search", "install on linux"], ["ask", "How do I install it on Linux?"]):
        assert runner.invoke(app, [*command, "--document-share", "0"]).exit_code == 0
        assert runner.invoke(app, [*command, "--document-share", "1.5"]).exit_code == 2
    (tmp_path / "ragwright.toml").write_text("[search]\ndocument_share = 3\n", "utf-8")
    for command in (["search", "install on linux"], ["ask", "How do I install it on Linux?"]):
        result = runner.invoke(app, command)
        assert result.exit_code != 0
        assert "document_share" in result.output, result.output


def test_zscore_divides_each_arm_by_its_spread() -> None:
    # BM25: one outlier stretches the range, so min-max squeezes the rest; the z-score keeps
    # them apart relative to the arm's spread.
    bm25 = [hit("a", "a", Arm.BM25, 10.0), hit("b", "b", Arm.BM25, 1.0)]
    bm25 += [hit("c", "c", Arm.BM25, 0.9), hit("d", "d", Arm.BM25, 0.0)]
    vector = [hit("c", "c", Arm.VECTOR, 0.9), hit("b", "b", Arm.VECTOR, 0.6)]
    vector += [hit("d", "d", Arm.VECTOR, 0.3)]
    fused = zscore_combination([bm25, vector])
    low = 0.0
    deviation = statistics.pstdev([10.0, 1.0, 0.9, 0.0])
    vector_deviation = statistics.pstdev([0.9, 0.6, 0.3])
    scores = {h.chunk.id: h.score for h in fused}
    assert scores["a"] == pytest.approx((10.0 - low) / deviation)
    assert scores["c"] == pytest.approx(0.9 / deviation + (0.9 - 0.3) / vector_deviation)
    assert order(fused)[0] == "c"
    assert order(convex_combination([bm25, vector]))[0] == "c"
    request = SearchRequest(fusion="zscore")
    assert request.fusion is Fusion.ZSCORE
