"""Fusion: combine ranked lists from several arms into one ranking.

- Reciprocal-rank fusion (Cormack et al., 2009), the default, scores a chunk by the sum over
  arms of ``weight / (k + rank)``. It needs no calibration between BM25 and cosine scores.
- Convex combination scores a chunk by the weighted sum of its min-max normalized score in
  each arm (0 where an arm did not return it). It uses the score gaps RRF ignores, at the cost
  of depending on each arm's score distribution.
- Z-score combination is the convex one with each arm's scores divided by their standard
  deviation instead of their range (shifted so the arm's lowest is 0): an arm whose scores
  spread widely relative to their range (a few clear winners) counts for more than one whose
  range is stretched by a single outlier.

Either way the fused score is on the rank scale: only its order means anything.

``document_share`` (0 to 1) lets each document's leading chunk (its best by its own fused
score) take that share of the document's best contribution in each arm when its own is lower
(or the arm did not return it). With chunked documents the BM25 arm often finds a document by
one chunk (its title, say) and the vector arm by another; fused chunk by chunk, neither chunk
gets both arms' evidence. At 1 documents rank as if fused by document, each led by its best
chunk; the document's other chunks keep their own scores, so a weak chunk of a strong
document does not push better passages of other documents down.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ragwright.errors import ConfigError
from ragwright.models import Arm, Candidate, Hit, Scale

DEFAULT_RRF_K = 60

# What each entry of a ranking adds to its chunk's fused score (before the arm's weight), from
# the scores of the whole ranking, best first (one call per ranking, not one per entry).
Normalizer = Callable[[Sequence[float]], list[float]]


@dataclass(frozen=True)
class FusedScores:
    """Fused chunk ids, best first, with each one's fused score, document, the arms that found
    it and its best rank in each."""

    order: list[str]
    scores: dict[str, float]
    documents: dict[str, str]
    arms: dict[str, set[Arm]]
    ranks: dict[str, dict[Arm, int]]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: int = DEFAULT_RRF_K,
    weights: Mapping[Arm, float] | None = None,
    document_share: float = 0.0,
) -> list[Hit]:
    """Fuse ranked hit lists, best first. Ties are broken by the best rank in any arm."""
    return fused_hits(rankings, weights, _reciprocal(k), document_share)


def fuse_ranked_lists(
    rankings: Sequence[tuple[Sequence[Hit], float]], *, k: int = DEFAULT_RRF_K
) -> list[Hit]:
    """Reciprocal-rank fusion of whole ranked lists, each with its weight: a hit adds
    ``weight / (k + rank)`` once per list, whatever arms found it (an already fused hybrid
    ranking counts as one list, beside the graph's). Hits keep the union of their arms and
    each arm's best rank; best first, ties broken by the best rank in any list, then by id."""
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    first_seen: dict[str, Hit] = {}
    arms: dict[str, set[Arm]] = {}
    ranks: dict[str, dict[Arm, int]] = {}
    for ranking, weight in rankings:
        for rank, hit in enumerate(ranking, start=1):
            chunk_id = hit.chunk.id
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
            best[chunk_id] = min(rank, best.get(chunk_id, rank))
            first_seen.setdefault(chunk_id, hit)
            arms.setdefault(chunk_id, set()).update(hit.arms)
            arm_ranks = ranks.setdefault(chunk_id, {})
            for arm, arm_rank in hit.arm_ranks.items():
                arm_ranks[arm] = min(arm_rank, arm_ranks.get(arm, arm_rank))
    order = sorted(scores, key=lambda cid: (-scores[cid], best[cid], cid))
    return [
        Hit(
            chunk=first_seen[cid].chunk,
            score=scores[cid],
            scale=Scale.FUSED,
            arms=frozenset(arms[cid]),
            source=first_seen[cid].source,
            arm_ranks=MappingProxyType(ranks[cid]),
            index=first_seen[cid].index,
        )
        for cid in order
    ]


def convex_combination(
    rankings: Sequence[Sequence[Hit]],
    *,
    weights: Mapping[Arm, float] | None = None,
    document_share: float = 0.0,
) -> list[Hit]:
    """Fuse by the weighted sum of each arm's min-max normalized scores, best first."""
    return fused_hits(rankings, weights, _min_max, document_share)


def zscore_combination(
    rankings: Sequence[Sequence[Hit]],
    *,
    weights: Mapping[Arm, float] | None = None,
    document_share: float = 0.0,
) -> list[Hit]:
    """Fuse by the weighted sum of each arm's scores over their standard deviation (the
    arm's lowest at 0, so a chunk an arm did not return adds nothing), best first."""
    return fused_hits(rankings, weights, _deviations, document_share)


def normalizer(method: str, rrf_k: int = DEFAULT_RRF_K) -> Normalizer:
    """The normalizer of a fusion method by `SearchRequest.fusion`'s value: ``rrf`` (with its
    ``rrf_k``), ``convex`` or ``zscore``."""
    if method == "rrf":
        return _reciprocal(rrf_k)
    if method == "convex":
        return _min_max
    if method == "zscore":
        return _deviations
    raise ConfigError(f"unknown fusion {method!r}: choose rrf, convex or zscore")


def _reciprocal(k: int) -> Normalizer:
    return lambda scores: [1.0 / (k + rank) for rank in range(1, len(scores) + 1)]


def _min_max(scores: Sequence[float]) -> list[float]:
    low = min(scores)
    spread = max(scores) - low
    return [(score - low) / spread for score in scores] if spread > 0 else [1.0] * len(scores)


def _deviations(scores: Sequence[float]) -> list[float]:
    low, mean = min(scores), sum(scores) / len(scores)
    deviation = math.sqrt(sum((score - mean) ** 2 for score in scores) / len(scores))
    if deviation > 0:
        return [(score - low) / deviation for score in scores]
    return [1.0] * len(scores)


def fused_hits(
    rankings: Sequence[Sequence[Hit]],
    weights: Mapping[Arm, float] | None,
    normalizer: Normalizer,
    document_share: float,
) -> list[Hit]:
    """`fused_scores` of hit lists, as rank-scale hits (each with its first-seen hit's
    chunk and source): what the three functions above give, by any `normalizer`."""
    first_seen: dict[str, Hit] = {}
    entries: list[list[Candidate]] = []
    for ranking in rankings:
        for hit in ranking:
            first_seen.setdefault(hit.chunk.id, hit)
        entries.append(
            [Candidate(h.chunk.id, h.chunk.document_id, h.score, h.arms) for h in ranking]
        )
    fused = fused_scores(entries, weights, normalizer, document_share)
    return [
        Hit(
            chunk=first_seen[cid].chunk,
            score=fused.scores[cid],
            scale=Scale.FUSED,
            arms=frozenset(fused.arms[cid]),
            source=first_seen[cid].source,
            arm_ranks=MappingProxyType(fused.ranks[cid]),
        )
        for cid in fused.order
    ]


def fused_scores(
    rankings: Sequence[Sequence[Candidate]],
    weights: Mapping[Arm, float] | None,
    normalizer: Normalizer,
    document_share: float = 0.0,
) -> FusedScores:
    """Sum each chunk's weighted contributions over the rankings (for a document's leading
    chunk, each raised to ``document_share`` of the document's best in that ranking), best
    first, ties broken by the best rank in any arm, then by chunk id."""
    if not 0.0 <= document_share <= 1.0:
        raise ConfigError(f"document_share must be between 0 and 1, got {document_share!r}")
    documents: dict[str, str] = {}
    arms: dict[str, set[Arm]] = {}
    ranks: dict[str, dict[Arm, int]] = {}
    scores: dict[str, float] = {}
    # Per ranking: each chunk's weighted contribution, and each document's best of them.
    contributions: list[tuple[dict[str, float], dict[str, float]]] = []
    best_rank: dict[str, int] = {}
    weight = (weights or {}).get  # an arm without a weight weighs 1
    for ranking in rankings:
        if not ranking:
            continue
        values = normalizer([entry.score for entry in ranking])
        own: dict[str, float] = {}
        best: dict[str, float] = {}  # a document absent counts as 0 (`_lift_leaders`)
        entries = zip(enumerate(ranking, start=1), values, strict=True)
        for (rank, (chunk_id, document_id, _, entry_arms)), value in entries:
            arm_ranks = ranks.get(chunk_id)
            if arm_ranks is None:
                documents[chunk_id], best_rank[chunk_id] = document_id, rank
                arms[chunk_id], ranks[chunk_id] = found_by, arm_ranks = set(), {}
            else:
                found_by = arms[chunk_id]
                best_rank[chunk_id] = min(rank, best_rank[chunk_id])
            total = own.get(chunk_id, 0.0)
            for arm in entry_arms:
                total += weight(arm, 1.0) * value
                found_by.add(arm)
                if rank < arm_ranks.get(arm, rank + 1):
                    arm_ranks[arm] = rank
            own[chunk_id] = total
            if total > best.get(document_id, 0.0):
                best[document_id] = total
        contributions.append((own, best))
        for chunk_id, value in own.items():  # summed ranking by ranking, as sum() would
            scores[chunk_id] = scores.get(chunk_id, 0.0) + value
    if document_share > 0.0:
        _lift_leaders(scores, best_rank, documents, contributions, document_share)
    # By (-score, best rank, chunk id) as tuples compared in C, not a key call each.
    keys = sorted([(-score, best_rank[cid], cid) for cid, score in scores.items()])
    return FusedScores([cid for _, _, cid in keys], scores, documents, arms, ranks)


def _lift_leaders(
    scores: dict[str, float],
    best_rank: Mapping[str, int],
    documents: Mapping[str, str],
    contributions: Sequence[tuple[Mapping[str, float], Mapping[str, float]]],
    share: float,
) -> None:
    """Raise each document's leading chunk (its best by fused score, best rank, then id) in
    each ranking to ``share`` of the document's best contribution there, when that is more
    than its own. Only the leader is lifted: lifting every chunk would let a weak chunk of the
    best document push better passages of other documents down."""
    # A document's only candidate is its own best in every ranking, so lifting it changes
    # nothing, unless a contribution below 0 (a negative weight) is raised to 0: skipping
    # those documents saved a quarter of a SciFact fusion.
    if any(min(own.values()) < 0 for own, _ in contributions):
        lifted = set(documents.values())
    else:
        lifted = {document for document, n in Counter(documents.values()).items() if n > 1}
    grouped: dict[str, list[str]] = {}
    for cid, document_id in documents.items():
        if document_id in lifted:
            grouped.setdefault(document_id, []).append(cid)
    for document_id, chunk_ids in grouped.items():
        _, _, cid = min([(-scores[c], best_rank[c], c) for c in chunk_ids])
        scores[cid] = sum(
            [
                max(own.get(cid, 0.0), share * best.get(document_id, 0.0))
                for own, best in contributions
            ]
        )
