"""Reciprocal-rank fusion: combine ranked lists from several arms into one ranking.

RRF (Cormack et al., 2009) scores a chunk by the sum over arms of ``weight / (k + rank)``.
It needs no score calibration between BM25 and cosine, which is why it is the default; the
fused score is a rank-scale number (only its order means anything).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ragwright.models import Arm, Hit, Scale

DEFAULT_RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: int = DEFAULT_RRF_K,
    weights: Mapping[Arm, float] | None = None,
) -> list[Hit]:
    """Fuse ranked hit lists, best first. Ties are broken by the best rank in any arm."""
    scores: dict[str, float] = {}
    first_seen: dict[str, Hit] = {}
    arms: dict[str, set[Arm]] = {}
    ranks: dict[str, dict[Arm, int]] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            chunk_id = hit.chunk.id
            for arm in hit.arms:
                weight = 1.0 if weights is None else weights.get(arm, 1.0)
                scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
                arms.setdefault(chunk_id, set()).add(arm)
                ranks.setdefault(chunk_id, {})[arm] = rank
            first_seen.setdefault(chunk_id, hit)
    order = sorted(scores, key=lambda cid: (-scores[cid], min(ranks[cid].values()), cid))
    return [
        Hit(
            chunk=first_seen[cid].chunk,
            score=scores[cid],
            scale=Scale.RANK,
            arms=frozenset(arms[cid]),
            source=first_seen[cid].source,
            arm_ranks=MappingProxyType(ranks[cid]),
        )
        for cid in order
    ]
