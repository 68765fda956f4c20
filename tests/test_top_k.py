"""`best_positions` picks exactly what ``ORDER BY score DESC, rowid LIMIT k`` would, whether
it bounds the cut-off from a sample (many scores per row wanted) or not."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.stores.top_k import best_positions


def expected(scores: np.ndarray, rowids: np.ndarray, k: int, positive: bool) -> list[int]:
    eligible = [i for i in range(scores.size) if scores[i] > 0 or not positive]
    return sorted(eligible, key=lambda i: (-float(scores[i]), int(rowids[i])))[:k]


@pytest.mark.parametrize("size", [0, 1, 9, 10, 11, 319, 320, 321, 5000])
@pytest.mark.parametrize("k", [1, 10, 100])
@pytest.mark.parametrize("levels", [None, 3, 50])  # None: all distinct; else heavy ties
@pytest.mark.parametrize("positive", [False, True])
def test_the_same_as_sorting_everything(
    size: int, k: int, levels: int | None, positive: bool
) -> None:
    rng = np.random.default_rng(size * 7 + k)
    if levels is None:
        scores = rng.random(size)
    else:
        scores = rng.integers(0, levels, size).astype(np.float64)
    if positive:
        scores[rng.random(size) < 0.6] = 0.0  # rows nothing matched
    rowids = rng.permutation(size * 3)[:size].astype(np.int64)
    found = best_positions(scores, rowids, k, positive=positive)
    assert found.tolist() == expected(scores, rowids, k, positive)


def test_float32_scores_and_the_best_in_a_corner() -> None:
    """The best rows where the sample does not look (between its strides), tied."""
    scores = np.zeros(10_000, dtype=np.float32)
    scores[[1, 3, 9_999]] = np.float32(0.75)
    scores[[5, 7]] = np.float32(0.5)
    rowids = np.arange(10_000, 0, -1, dtype=np.int64)  # descending: ties go to the later rows
    assert best_positions(scores, rowids, 4).tolist() == [9_999, 3, 1, 7]
    assert best_positions(scores, rowids, 6, positive=True).tolist() == [9_999, 3, 1, 7, 5]


def test_nothing_wanted_or_nothing_positive() -> None:
    scores = np.zeros(1000)
    rowids = np.arange(1000, dtype=np.int64)
    assert best_positions(scores, rowids, 0).size == 0
    assert best_positions(scores, rowids, 10, positive=True).size == 0
    assert best_positions(scores, rowids, 3).tolist() == [0, 1, 2]
