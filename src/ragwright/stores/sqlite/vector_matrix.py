"""Exact nearest-neighbour search over an in-memory matrix of unit vectors.

The store is the source of truth; this is a derived cache. Rows are kept in ascending row id
order so that a filter's matching row ids map to matrix rows with one ``searchsorted``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.stores.sqlite.keyword_matrix import best_positions

Floats = npt.NDArray[np.float32]
RowIds = npt.NDArray[np.int64]


@dataclass(frozen=True)
class VectorMatrix:
    rowids: RowIds
    matrix: Floats

    @classmethod
    def empty(cls, dimension: int) -> VectorMatrix:
        return cls(np.empty(0, dtype=np.int64), np.empty((0, dimension), dtype=np.float32))

    @classmethod
    def from_rows(
        cls, rows: list[tuple[int, bytes]], dimension: int, *, normalize: bool = False
    ) -> VectorMatrix:
        """The matrix of stored vectors; ``normalize`` makes rows unit length (for a space
        whose embedder does not normalize, so that scores are cosine similarities)."""
        if not rows:
            return cls.empty(dimension)
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[1] for r in rows)
        matrix = np.frombuffer(blob, dtype="<f4").reshape(len(rows), dimension)
        order = np.argsort(rowids, kind="stable")
        ordered = np.ascontiguousarray(matrix[order], dtype=np.float32)
        if normalize:
            norms = np.linalg.norm(ordered, axis=1, keepdims=True)
            ordered = ordered / np.maximum(norms, np.float32(1e-12))
        return cls(rowids[order], ordered)

    def __len__(self) -> int:
        return int(self.rowids.shape[0])

    def positions_of(self, rowids: RowIds) -> npt.NDArray[np.intp]:
        """Matrix rows of the given row ids; ids not in the matrix are dropped."""
        if len(self) == 0 or rowids.size == 0:
            return np.empty(0, dtype=np.intp)
        positions = np.searchsorted(self.rowids, rowids)
        positions = positions[positions < len(self)]
        return positions[np.isin(self.rowids[positions], rowids)]

    def top_k(
        self, query: Floats, k: int, positions: npt.NDArray[np.intp] | None = None
    ) -> list[tuple[int, float]]:
        """(row id, cosine similarity) of the k best rows, best first."""
        if positions is None:
            scores = self.matrix @ query
            candidates = self.rowids
        elif positions.size * 4 > len(self):  # a broad filter: one product, then pick rows
            scores = (self.matrix @ query)[positions]
            candidates = self.rowids[positions]
        else:  # a selective filter: multiply only the rows it allows
            scores = self.matrix[positions] @ query
            candidates = self.rowids[positions]
        n = int(scores.shape[0])
        if n == 0 or k <= 0:
            return []
        best = best_positions(scores, candidates, k)
        return [(int(candidates[i]), float(scores[i])) for i in best]
