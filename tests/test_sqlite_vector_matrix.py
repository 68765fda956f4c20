"""`VectorMatrix.top_k` within a filter's rows against plain numpy: a matrix of several
blocks (rows appended after writes, some removed), filters of a few rows up to more than
one gathered piece, every allowed row eligible."""

from __future__ import annotations

import numpy as np
import pytest

from ragwright.stores.sqlite.row_slots import RowSlots
from ragwright.stores.sqlite.vector_matrix import VectorMatrix


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("allowed_rows", [1, 7, 1024, 1025, 2400])
def test_a_filtered_top_k_equals_numpy_over_the_allowed_live_rows(allowed_rows: int) -> None:
    rng = np.random.default_rng(allowed_rows)
    sizes = (6000, 1500, 2500)  # the first build, then two batches of written rows
    blocks = tuple(unit(rng.normal(size=(n, 16))) for n in sizes)
    rowids = rng.permutation(np.arange(1, sum(sizes) + 1)).astype(np.int64)
    matrix = VectorMatrix(RowSlots.of(rowids), blocks)
    matrix = matrix.extended(rowids[::9], VectorMatrix(RowSlots.of(rowids[:0]), ()))  # removed
    vectors, query = np.concatenate(blocks), unit(rng.normal(size=16))
    allowed = rng.choice(rowids, allowed_rows, replace=False)  # some of them removed
    found = matrix.top_k(query, 10, matrix.rows.slots_of(allowed))  # as the store asks
    live = np.flatnonzero(np.isin(rowids, allowed) & matrix.rows.live)
    scores = vectors[live] @ query
    best = live[np.lexsort((rowids[live], -scores))][:10]
    assert [rowid for rowid, _ in found] == rowids[best].tolist()
    assert [score for _, score in found] == pytest.approx((vectors[best] @ query).tolist())
