"""The k best scores of a search, exactly as ``ORDER BY score DESC, rowid LIMIT k`` picks them.

Selecting them costs more than it should: ``np.partition`` of the 11,639 float32 scores of a
SciFact vector search took ~105 µs, as long as the rest of the call beside the product. So
the cut-off is first bounded from a sample: the k-th best of any k or more of the scores is
at most the k-th best of them all, so every score that can be among the k best (ties at the
cut-off included) is at least that high. Only those few are partitioned and sorted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#: Scores sampled per row wanted; about as many candidates per row are left over. SciFact's
#: 11,639 scores: 23-54 µs for k = 10 to 200 (the whole partition alone: 105-125 µs).
_SAMPLED_PER_ROW = 16
#: Below this many scores per row wanted, a sample saves nothing: all are candidates.
_SAMPLE_FROM = 2 * _SAMPLED_PER_ROW
#: At most this many scores are sorted whole: bounding the cut-off first costs more than it
#: saves (56 rescored candidates: ~6 µs against ~25, ad hoc).
_SORTED_WHOLE = 256


def best_positions(
    scores: npt.NDArray[np.floating[Any]],
    rowids: npt.NDArray[np.int64],
    k: int,
    *,
    positive: bool = False,
) -> npt.NDArray[np.intp]:
    """Indices of the k best scores, best first, ties broken by ascending row id, exactly as
    ``ORDER BY score DESC, rowid LIMIT k`` would (rows tied at the cut-off are all considered
    before cutting, so the choice among them is not left to argpartition). ``positive``:
    only scores above 0 count (BM25 sums, where 0 is a row no term matched)."""
    if k <= 0:
        return np.empty(0, dtype=np.intp)
    if not positive and scores.shape[0] <= _SORTED_WHOLE:  # an 8-bit scan's candidates
        return np.lexsort((rowids, -scores))[:k]
    kept = _candidates(scores, k, positive)
    if k < kept.size:
        among = scores[kept]
        cutoff = np.partition(among, among.size - k)[among.size - k]
        kept = kept[among >= cutoff]
    order = np.lexsort((rowids[kept], -scores[kept]))
    return kept[order][:k]


def _candidates(
    scores: npt.NDArray[np.floating[Any]], k: int, positive: bool
) -> npt.NDArray[np.intp]:
    """The positions of every score that can be among the k best."""
    size = int(scores.shape[0])
    if size >= _SAMPLE_FROM * k:
        sample = scores[:: size // (_SAMPLED_PER_ROW * k)]
        floor = np.partition(sample, sample.size - k)[sample.size - k]
        if floor > 0 or not positive:  # else too few positive samples: any positive may do
            return np.flatnonzero(scores >= floor)
    if positive:
        return np.flatnonzero(scores > 0)
    return np.arange(size)


def ranked_pairs(
    rowids: npt.NDArray[np.int64], scores: npt.NDArray[np.floating[Any]], best: npt.NDArray[np.intp]
) -> list[tuple[int, float]]:
    """(row id, score) at the positions ``best`` (from `best_positions`), as Python numbers,
    converted by numpy at once: indexing one element at a time makes a numpy scalar of each."""
    return list(zip(rowids[best].tolist(), scores[best].tolist(), strict=True))
