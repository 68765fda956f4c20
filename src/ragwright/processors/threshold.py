"""Similarity threshold: drop hits whose raw score is below a minimum.

Only raw scores mean something against a fixed number. A fused ranking (scale ``rank``, e.g.
reciprocal-rank fusion) orders hits but its values are opaque, so a threshold on it is refused
with `~ragwright.errors.UnsupportedScale` rather than applied (which would silently keep or drop
everything). Cosine similarities (``similarity``) are the intended use; BM25 scores are accepted
too, but they are not comparable across queries, so a BM25 threshold is a blunt tool.
"""

from __future__ import annotations

from ragwright.errors import UnsupportedScale
from ragwright.models import Hit
from ragwright.processors._args import real


class SimilarityThreshold:
    """Keeps the hits whose score is at least ``min_score``, in their order."""

    name: str = "threshold"
    last: bool = False

    def __init__(self, min_score: float) -> None:
        self.min_score = real("threshold", "min_score", min_score)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        self._check_scales(hits)
        return [hit for hit in hits if hit.score >= self.min_score]

    def _check_scales(self, hits: list[Hit]) -> None:
        scales = {hit.scale for hit in hits}
        if any(not scale.thresholdable for scale in scales):
            raise UnsupportedScale(
                f"threshold min_score={self.min_score:g} compares raw scores, but these hits "
                "carry scale 'fused': a fused ranking whose values only order the hits. Apply "
                "the threshold to a single arm (search mode 'vector' for cosine similarity), or "
                "cut the fused list with top_n instead"
            )
        if len(scales) > 1:
            names = ", ".join(sorted(scale.value for scale in scales))
            raise UnsupportedScale(
                f"threshold min_score={self.min_score:g} needs hits of one scale, but these "
                f"mix {names}; apply it to the results of a single arm"
            )

    def __repr__(self) -> str:
        return f"SimilarityThreshold(min_score={self.min_score:g})"
