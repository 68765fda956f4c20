"""`Adjacency`: a sparse matrix's rows in plain numpy arrays (compressed sparse rows), and the
one operation the walk needs of it: the entries of many rows at once, gathered without a Python
loop over rows. scipy builds it (its coordinate-to-row conversion is a linear pass in C, where
a numpy sort of 7 million links takes seconds); reading it needs numpy alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.errors import MissingDependencyError

Int64s = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]
Float32s = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Adjacency:
    """Row ``i``'s entries are ``columns[pointers[i]:pointers[i + 1]]`` with ``values`` at
    the same positions (a row may name a column twice: the values then add up)."""

    pointers: Int64s
    columns: Int32s
    values: Float32s

    @property
    def rows(self) -> int:
        return len(self.pointers) - 1

    @property
    def counts(self) -> Int64s:
        """How many entries each row has."""
        return np.diff(self.pointers)

    @classmethod
    def from_coordinates(
        cls, rows: npt.NDArray[np.integer], columns: npt.NDArray[np.integer], values: Float32s,
        shape: tuple[int, int],
    ) -> Adjacency:  # fmt: skip
        """The ``shape`` matrix with ``values[i]`` at (``rows[i]``, ``columns[i]``),
        repeated coordinates summed."""
        sparse = _scipy_sparse()
        matrix = sparse.csr_matrix((values, (rows, columns)), shape=shape, dtype=np.float32)
        matrix.sum_duplicates()
        return cls(
            matrix.indptr.astype(np.int64),
            matrix.indices.astype(np.int32, copy=False),
            matrix.data.astype(np.float32, copy=False),
        )

    def normalized(self) -> Adjacency:
        """Each row's values divided by their sum (rows summing to 0 left as they are)."""
        owner = np.repeat(np.arange(self.rows), self.counts)
        # float64 even for no rows (numpy's bincount of nothing is int64)
        totals = np.bincount(owner, weights=self.values, minlength=self.rows).astype(np.float64)
        scale = np.divide(1.0, totals, out=np.ones_like(totals), where=totals > 0)
        values = (self.values * scale[owner]).astype(np.float32)
        return Adjacency(self.pointers, self.columns, values)

    def gather(self, rows: Int64s) -> tuple[Int64s, Int32s, Float32s]:
        """The entries of ``rows``: for each, the position in ``rows`` of the row it is in, its
        column and its value (rows in the order given, each row's entries in stored order)."""
        starts = self.pointers[rows]
        counts = self.pointers[rows + 1] - starts
        total = int(counts.sum())
        owner = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
        offsets = np.cumsum(counts) - counts
        positions = np.arange(total, dtype=np.int64) - offsets[owner] + starts[owner]
        return owner, self.columns[positions], self.values[positions]


def _scipy_sparse() -> Any:
    try:
        from scipy import sparse
    except ImportError as error:
        raise MissingDependencyError("graph search", "pip install 'ragwright[graph]'") from error
    return sparse
