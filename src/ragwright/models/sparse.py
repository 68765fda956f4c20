"""`SparseVector`: learned term weights over a model's vocabulary, the non-zero ones only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError


@dataclass(frozen=True, slots=True, eq=False)
class SparseVector:
    """Term ids (distinct, ascending) and their weights (all > 0), as two aligned arrays."""

    terms: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        if self.terms.shape != self.weights.shape or self.terms.ndim != 1:
            raise ConfigError("a sparse vector needs aligned 1-d term and weight arrays")

    @classmethod
    def from_dense(cls, row: npt.NDArray[np.float32]) -> SparseVector:
        """The non-zero entries of one dense row over the vocabulary."""
        terms = np.flatnonzero(row > 0).astype(np.int64)
        return cls(terms, row[terms].astype(np.float32))

    def __len__(self) -> int:
        return int(self.terms.shape[0])

    def dot(self, other: SparseVector) -> float:
        """The inner product: what the sparse arm ranks by."""
        shared, mine, theirs = np.intersect1d(
            self.terms, other.terms, assume_unique=True, return_indices=True
        )
        if not len(shared):
            return 0.0
        return float(np.dot(self.weights[mine], other.weights[theirs]))

    def top(self, n: int) -> SparseVector:
        """The ``n`` heaviest terms (a query's, to bound the postings read), still ascending."""
        if len(self) <= n:
            return self
        keep = np.sort(np.argsort(-self.weights, kind="stable")[:n])
        return SparseVector(self.terms[keep], self.weights[keep])
