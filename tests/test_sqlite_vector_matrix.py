"""`VectorMatrix.top_k` within a filter's rows against plain numpy: a matrix of several
blocks (rows appended after writes, some removed), filters of a few rows up to more than
one gathered piece, every allowed row eligible."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragwright.models import EmbeddingSpace
from ragwright.stores.row_slots import RowSlots
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore, vector_matrix
from ragwright.stores.sqlite.vector_matrix import VectorMatrix
from ragwright.testing.store_contract import make_document


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


def test_loading_normalizes_each_stored_row_to_unit_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A space whose embedder does not normalize: the matrix holds each stored vector divided
    by its length (normalized a fetch at a time), in row id order."""
    monkeypatch.setattr(vector_matrix, "_ROWS_PER_FETCH", 4)  # several fetches, the last short
    space = EmbeddingSpace("raw-test", 8, False, "cosine", "raw-test-fingerprint")
    rng = np.random.default_rng(3)
    stored = rng.normal(size=(15, 8)).astype(np.float32) * rng.uniform(0.1, 9, size=(15, 1))
    with SQLiteStore(tmp_path, background=False) as store:
        store.bind_space(space)
        for n in range(5):
            document, chunks = make_document(f"d{n}.md", [f"doc {n} part {i}" for i in range(3)])
            store.upsert(document, chunks, stored[3 * n : 3 * n + 3].astype(np.float32))
    db = sqlite3.connect(tmp_path / DATABASE_NAME)
    try:
        loaded = VectorMatrix.load(db, 8, normalize=True)
        order = [r[0] for r in db.execute("SELECT rowid FROM chunks ORDER BY rowid")]
    finally:
        db.close()
    assert loaded.rows.rowids.tolist() == order
    (matrix,) = loaded.blocks
    assert matrix.dtype == np.float32 and matrix.flags.c_contiguous
    np.testing.assert_allclose(matrix, unit(stored), rtol=1e-6, atol=1e-7)
