"""Fusion's results are exactly those of its definition, computed the plain way, on generated
rankings with tied scores, chunks found by both arms, documents with several chunks, weights
and every document share: a faster fusion must keep every score, order, arm and rank."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import pytest

from ragwright.models import Arm, Chunk, Hit, Scale
from ragwright.pipeline.search.fusion import (
    convex_combination,
    reciprocal_rank_fusion,
    zscore_combination,
)

Values = Callable[[Sequence[Hit]], list[float]]  # each hit's contribution, by rank


def min_max(ranking: Sequence[Hit]) -> list[float]:
    low = min(h.score for h in ranking)
    spread = max(h.score for h in ranking) - low
    return [(h.score - low) / spread if spread > 0 else 1.0 for h in ranking]


def z_score(ranking: Sequence[Hit]) -> list[float]:
    scores = [h.score for h in ranking]
    low, mean = min(scores), sum(scores) / len(scores)
    deviation = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    return [(s - low) / deviation if deviation > 0 else 1.0 for s in scores]


def reciprocal(k: int) -> Values:
    return lambda ranking: [1.0 / (k + rank) for rank in range(1, len(ranking) + 1)]


def reference(
    rankings: list[list[Hit]], values: Values, weights: dict[Arm, float], share: float
) -> list[tuple[str, float, frozenset[Arm], dict[Arm, int]]]:
    """The definition: a chunk's score sums its weighted contributions over the rankings; a
    document's leading chunk (best by that score) takes, in each ranking, at least ``share``
    of the document's best there; ties go to the best rank in any arm, then the chunk id."""
    own: list[dict[str, float]] = []
    document = {h.chunk.id: h.chunk.document_id for r in rankings for h in r}
    arms: dict[str, set[Arm]] = {}
    ranks: dict[str, dict[Arm, int]] = {}
    for ranking in rankings:
        (arm,) = ranking[0].arms
        own.append({})
        for rank, (h, value) in enumerate(zip(ranking, values(ranking), strict=True), start=1):
            own[-1][h.chunk.id] = weights.get(arm, 1.0) * value
            arms.setdefault(h.chunk.id, set()).add(arm)
            ranks.setdefault(h.chunk.id, {})[arm] = rank
    documents = set(document.values())
    best = [
        {d: max([0.0, *(v for c, v in mine.items() if document[c] == d)]) for d in documents}
        for mine in own
    ]
    score = {c: sum(mine.get(c, 0.0) for mine in own) for c in document}

    def key(c: str) -> tuple[float, int, str]:
        return (-score[c], min(ranks[c].values()), c)

    if share > 0:
        for d in set(document.values()):
            leader = min((c for c in document if document[c] == d), key=key)
            score[leader] = sum(
                max(mine.get(leader, 0.0), share * top.get(d, 0.0))
                for mine, top in zip(own, best, strict=True)
            )
    return [(c, score[c], frozenset(arms[c]), ranks[c]) for c in sorted(document, key=key)]


def generated(pick: random.Random) -> list[list[Hit]]:
    pool = [(f"c{i:02d}", f"d{i // pick.randint(1, 4)}") for i in range(pick.randint(2, 40))]
    rankings = []
    for arm in (Arm.BM25, Arm.VECTOR):
        chosen = pick.sample(pool, pick.randint(1, len(pool)))
        # Rounded scores: ties within an arm, and between fused scores.
        scores = sorted((round(pick.uniform(0, 3), 1) for _ in chosen), reverse=True)
        scale = Scale.BM25 if arm is Arm.BM25 else Scale.SIMILARITY
        rankings.append(
            [
                Hit(Chunk(c, d, 0, "", 0, 0), s, scale, frozenset({arm}), arm_ranks={arm: r})
                for r, ((c, d), s) in enumerate(zip(chosen, scores, strict=True), start=1)
            ]
        )
    return rankings


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("fusion", ["convex", "zscore", "rrf"])
def test_fusion_gives_exactly_its_definition(fusion: str, share: float) -> None:
    pick = random.Random(f"{fusion}{share}")
    for _ in range(300):
        rankings = generated(pick)
        # A negative weight too (the functions take any): a document's leader is then lifted
        # even when it is the document's only chunk (its own contribution is below 0).
        weights = {
            Arm.BM25: pick.choice([1.0, 0.5, 2.0, -0.5]),
            Arm.VECTOR: pick.choice([1.0, 1.5]),
        }
        if fusion == "rrf":
            k = pick.choice([1, 5, 60])
            fused = reciprocal_rank_fusion(rankings, k=k, weights=weights, document_share=share)
            values = reciprocal(k)
        else:
            combine, values = (convex_combination, min_max)
            if fusion == "zscore":
                combine, values = zscore_combination, z_score
            fused = combine(rankings, weights=weights, document_share=share)
        expected = reference(rankings, values, weights, share)
        got = [(h.chunk.id, h.score, h.arms, dict(h.arm_ranks)) for h in fused]
        assert got == expected
        assert all(h.scale is Scale.FUSED for h in fused)
