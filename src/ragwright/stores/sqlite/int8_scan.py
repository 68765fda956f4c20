"""Exact top-k over a block of vectors reading a quarter of its bytes: an 8-bit copy of the
block is scanned first, the rows it ranks best are rescored from their float32 vectors, and a
bound on what the 8-bit rounding can change proves that no other row is among the k best.
Where the bound cannot prove it (rows tied within the rounding at the cut-off), the caller
multiplies the whole block, as before.

Why: an unfiltered exact search multiplies every row by the query, and that product is bound by
memory bandwidth, not arithmetic. At SciFact's size (11,639 x 384, 18 MB) the float32 product
took 0.77 ms p50, faiss's float16 scan 0.53 ms and this 8-bit one 0.28 ms (faiss's scalar
quantizer with "direct" codes: an integer product in SIMD), interleaved on one 2-core machine
(ad hoc, 300 queries x 3).

The codes: each dimension i is scaled by s_i = 127 / (its largest magnitude) and rounded, so a
row x is stored as x' = round(s * x). faiss rounds the query to integers too (it scans integer
codes against integer codes), so the query is scaled first: y = q / s, c = 127 / max |y_i|,
q' = round(c * y), and the scan's score of a row is exactly q'.x', an integer. The bound on a
row's exact score q.x from it:

    q.x - q'.x' / c = q.(x - x' / s) + sum_i (y_i - q'_i / c) x'_i

- the first term is at most |q| |x - x' / s| (Cauchy-Schwarz), measured for every row;
- each |y_i - q'_i / c| is at most 1/2 / c, plus float32's rounding of y and c * y, so the
  second term is at most (1/2 / c) times the sum of the row's |x'_i|, measured too;
- rescoring the row in float32 adds at most d u / (1 - d u) |q| |x| (u = 2^-24, the classic
  bound on a float sum, whatever the order).

So a row the scan did not return, ranked at most at its last returned score t, rescores to at
most t / c + ``reach`` / c + |q| ``slack``, the largest of those terms over the block's rows
(with 1% on top for the rounding of the measures themselves). When the k-th best rescored
candidate beats that, the k best rows are among the candidates, ties included. On SciFact's
test queries it proved 297 of 300 top-20s from 56 candidates, and all 300 top-10s from 36.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.stores.sqlite.faiss_library import available, faiss_module

Floats = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]
log = logging.getLogger(__name__)

#: Blocks this small are multiplied whole: the scan's fixed cost outweighs its saving.
MIN_ROWS = 4096
#: The 8-bit copy costs a quarter of the block's memory again: it is kept to the collections
#: exact search serves by default (`ann_choice.MIN_ROWS`, 50,000 chunks; the graph serves larger
#: ones), not a million-row matrix whose product nothing but ``ann = off`` asks for.
MAX_ROWS = 65_536
_UNIT_ROUNDING = 2.0**-24
_LARGEST_CODE = 127


@dataclass(frozen=True)
class Int8Scan:
    """A block's 8-bit copy (a faiss flat scalar quantizer of direct signed codes, inner
    product), each dimension's scale, and the largest errors a score read from it can carry:
    per unit of the query's length (``slack``) and per unit of its scale (``reach``)."""

    index: Any
    scales: Floats
    slack: float
    reach: float

    @classmethod
    def of(cls, block: Floats) -> Int8Scan | None:
        """The scan of ``block``; None where faiss is not installed or a value is not finite."""
        if not available() or not np.isfinite(block).all():
            return None
        faiss = faiss_module()
        largest = np.abs(block).max(axis=0)
        scales = (_LARGEST_CODE / np.where(largest > 0, largest, 1.0)).astype(np.float32)
        codes = np.rint(block * scales)
        residual = block - codes / scales
        dimension = block.shape[1]
        gamma = dimension * _UNIT_ROUNDING / (1 - dimension * _UNIT_ROUNDING)
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        errors = np.sqrt(np.einsum("ij,ij->i", residual, residual))
        # Half a step of the query's rounding to integers, and float32's rounding of y, of c
        # and of c * y (each at most 127 u, 8e-6 in all); float32 holds the scan's integer
        # scores exactly below 2^24.
        step = 0.5 + 1e-4
        sums = float(np.abs(codes).sum(axis=1).max())
        if sums * _LARGEST_CODE >= 2**24:  # a score beyond float32's exact integers
            return None
        slack = 1.01 * float((errors + gamma * norms + _UNIT_ROUNDING * (norms + errors)).max())
        reach = 1.01 * step * sums
        index = faiss.IndexScalarQuantizer(
            dimension, faiss.ScalarQuantizer.QT_8bit_direct_signed, faiss.METRIC_INNER_PRODUCT
        )
        index.add(np.ascontiguousarray(codes, dtype=np.float32))  # integers: stored exactly
        return cls(index, scales, slack, reach)

    def candidates(self, query: Floats, count: int) -> tuple[Positions, float]:
        """The positions of the ``count`` rows the scan ranks best (at most), and the score no
        other row can reach once rescored (-inf when every row was returned, inf when the
        scan proves nothing: a query of zeros)."""
        import faiss  # imported already: it built this scan

        scaled = query / self.scales
        top = float(np.abs(scaled).max())
        if top == 0.0:
            return np.arange(min(count, self.index.ntotal), dtype=np.int64), math.inf
        factor = _LARGEST_CODE / top
        # One OpenMP thread for this one query (the setting is per thread): a team of
        # threads spinning up for a single row of queries cost more than the scan itself.
        faiss.omp_set_num_threads(1)
        scores, positions = self.index.search(np.rint(scaled * factor).reshape(1, -1), count)
        found = positions[0]
        if found[-1] < 0:  # fewer rows than asked for: all of them
            return found[found >= 0], -math.inf
        length = math.sqrt(float(np.dot(query, query)))
        return found, (float(scores[0, -1]) + self.reach) / factor + length * self.slack


class BlockScans:
    """The scans of a vector matrix's blocks, by position (None: the block is multiplied
    whole), built on first use: in the search that asks, or in a thread while the whole
    product answers (a scan of 65,536 rows took 0.3 s to build, more than a one-off search
    saves). A write appends a block to the matrix, so a matrix extended from another shares
    its scans (`shared`)."""

    def __init__(self) -> None:
        self._built: dict[int, Int8Scan | None] = {}
        self._building: set[int] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def of(self, blocks: Sequence[Floats], *, background: bool) -> list[Int8Scan | None]:
        """Each block's scan; one not built yet is built now, or (``background``) in a
        thread, None standing for it meanwhile."""
        with self._lock:
            missing = []
            for at, block in enumerate(blocks):
                if at in self._built or at in self._building:
                    continue
                if MIN_ROWS <= block.shape[0] <= MAX_ROWS:
                    missing.append((at, block))
                    self._building.add(at)
                else:  # multiplied whole: a write's few rows, or a block too large
                    self._built[at] = None
        if missing and background:
            thread = threading.Thread(
                target=self._build, args=(missing,), name="ragwright int8 scan", daemon=True
            )
            self._threads[:] = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()
        elif missing:
            self._build(missing)
        return [self._built.get(at) for at in range(len(blocks))]

    def shared(self) -> BlockScans:
        """A holder of these same scans, for a matrix of these blocks and more."""
        return copy.copy(self)  # the same table, lock and threads

    def wait(self) -> None:
        """Wait for the scans being built in threads (tests)."""
        for thread in list(self._threads):
            thread.join()

    def _build(self, blocks: list[tuple[int, Floats]]) -> None:
        for at, block in blocks:
            scan = None
            try:
                scan = Int8Scan.of(block)
            except (MemoryError, RuntimeError) as error:  # faiss's own errors
                log.warning("exact search multiplies every row: no 8-bit scan (%s)", error)
            with self._lock:
                self._built[at] = scan
                self._building.discard(at)
