"""Exact top-k over a block of vectors reading half its bytes: a float16 copy of the block is
scanned first, the rows it ranks best are rescored from their float32 vectors, and a bound on
what float16 rounding can change proves that no other row is among the k best. Where the bound
cannot prove it (rows tied within the rounding at the cut-off), the caller multiplies the
whole block, as before.

Why: an unfiltered exact search multiplies every row by the query, and that product is bound by
memory bandwidth, not arithmetic. At SciFact's size (11,639 x 384, 18 MB) the product took
0.75 ms p50 against 0.41 for faiss's float16 scan of the same rows (its SIMD kernels; numpy
has no fast float16 product), interleaved on one 2-core machine (benchmarks/peers.py).

The bound, for a query q, a row x and its float16 copy x':

- |q.x - q.x'| <= |q| |x - x'| (Cauchy-Schwarz), with |x - x'| measured for every row;
- the scan and the rescoring each sum d float32 products, each sum off from the exact one by
  at most d u / (1 - d u) |q| |x| (u = 2^-24, the classic bound, whatever the order of
  summation or the use of fused multiply-adds).

So a row the scan did not return, ranked below its last returned score s, rescores to at most
s + |q| slack, where ``slack`` is the largest sum of those terms over the block's rows (doubled:
it costs nothing, the scores of a row's neighbours differ by far more). When the k-th best
rescored candidate beats that, the k best rows are among the candidates, ties included.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]

#: Blocks this small are multiplied whole: the scan's fixed cost outweighs its saving.
MIN_ROWS = 4096
#: The float16 copy costs half the block's memory again: it is kept to the collections exact
#: search serves by default (`ann_choice.MIN_ROWS`, 50,000 chunks; the graph serves larger
#: ones), not a million-row matrix whose product nothing but ``ann = off`` asks for.
MAX_ROWS = 65_536
_UNIT_ROUNDING = 2.0**-24


@dataclass(frozen=True)
class HalfScan:
    """A block's float16 copy (a faiss flat scalar quantizer, inner product) and the largest
    error, per unit of the query's length, that a score read from it can carry."""

    index: Any
    slack: float

    @classmethod
    def of(cls, block: Floats) -> HalfScan | None:
        """The scan of ``block``; None where faiss is not installed or a value does not fit
        in float16."""
        faiss = _faiss()
        if faiss is None:
            return None
        with np.errstate(over="ignore"):  # beyond float16's range: refused just below
            half = block.astype(np.float16)
        if not np.isfinite(half).all():
            return None
        # Both the float32 row and its float16 copy are float32 numbers, and they are close:
        # their difference is exact in float32 (Sterbenz), so only the norms round.
        difference = block - half.astype(np.float32)
        residual = np.sqrt(np.einsum("ij,ij->i", difference, difference))
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        dimension = block.shape[1]
        gamma = dimension * _UNIT_ROUNDING / (1 - dimension * _UNIT_ROUNDING)
        # |x'| <= |x| + |x - x'|; 1.01 covers the rounding of these norms themselves.
        worst = residual + gamma * (2 * norms + residual)
        slack = 2 * 1.01 * float(worst.max(initial=0.0))
        index = faiss.IndexScalarQuantizer(
            dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        index.add(np.ascontiguousarray(block))
        return cls(index, slack)

    def candidates(self, query: Floats, count: int) -> tuple[Positions, float]:
        """The positions of the ``count`` rows the scan ranks best, and the score no other
        row can reach once rescored (-inf when every row was returned)."""
        import faiss  # imported already: it built this scan

        # One OpenMP thread for this one query (the setting is per thread): a team of
        # threads spinning up for a single row of queries cost more than the scan itself.
        faiss.omp_set_num_threads(1)
        scores, positions = self.index.search(query.reshape(1, -1), count)
        found = positions[0]
        if found[-1] < 0:  # fewer rows than asked for: all of them
            return found[found >= 0], -math.inf
        length = math.sqrt(float(np.dot(query, query)))
        return found, float(scores[0, -1]) + length * self.slack


def _faiss() -> Any:
    """faiss, or None where it is not installed (the ``ann`` extra): then every block is
    multiplied whole, as before."""
    try:
        if importlib.util.find_spec("faiss") is None:
            return None
        import faiss
    except (ImportError, ValueError):  # hidden (a None in sys.modules) or broken
        return None
    return faiss
