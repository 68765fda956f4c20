"""Exact nearest-neighbour search over a matrix of unit vectors: a derived cache.

The store is the source of truth. The matrix is one block per batch of rows the cache has
seen (the first build, memory-mapped from its file, then the rows added since), with removed
rows masked: a write never copies the blocks already built. Row slots are `row_slots`'.
An unfiltered search reads a large enough block through its 8-bit scan (`int8_scan`), built
on first use and kept by the matrices extended from this one.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.stores.row_slots import RowIds, RowSlots, Slots
from ragwright.stores.sqlite.blas_threads import one_blas_thread
from ragwright.stores.sqlite.int8_scan import BlockScans
from ragwright.stores.top_k import best_positions, ranked_pairs

Floats = npt.NDArray[np.float32]
#: Rows read per fetch while building (bounds the memory of the row tuples in flight).
_ROWS_PER_FETCH = 20_000
#: Rows gathered per product in a filtered search (1.5 MB at 384 dimensions): a 1% filter's
#: 10,000 scattered rows at a million chunks scored in 3.4 ms, against 5.6 ms as one gather
#: and one product (benchmarks/scale.py's matrix, one thread, a loaded machine).
_GATHER_ROWS = 1024
#: Candidates an 8-bit scan proposes beyond twice the k asked for: the more there are, the
#: lower the score a row left out can reach, and the rarer a fallback to the whole product.
_SCAN_MARGIN = 16


@dataclass(frozen=True)
class VectorMatrix:
    rows: RowSlots
    blocks: tuple[Floats, ...]  # slots in order: block 0's rows, then block 1's, …
    scans: BlockScans = field(default_factory=BlockScans, compare=False, repr=False)

    @classmethod
    def load(
        cls,
        db: sqlite3.Connection,
        dimension: int,
        *,
        normalize: bool,
        rowids: RowIds | None = None,
    ) -> VectorMatrix:
        """The stored vectors (of ``rowids`` only, if given) in row id order; ``normalize``
        makes rows unit length (for a space whose embedder does not normalize, so that
        scores are cosine similarities). Call inside one read transaction."""
        if rowids is None:
            count = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            cursor = db.execute("SELECT rowid, vector FROM chunks ORDER BY rowid")
        else:
            count = int(rowids.size)
            cursor = db.execute(
                "SELECT rowid, vector FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) "
                "ORDER BY rowid",
                (json_ids(rowids),),
            )
        ids = np.empty(count, dtype=np.int64)
        matrix = np.empty((count, dimension), dtype=np.float32)
        filled = 0
        while batch := cursor.fetchmany(_ROWS_PER_FETCH):
            end = filled + len(batch)
            ids[filled:end] = [r[0] for r in batch]
            rows = matrix[filled:end]
            rows[:] = np.frombuffer(b"".join(r[1] for r in batch), dtype="<f4").reshape(
                len(batch), dimension
            )
            if normalize:  # a fetch at a time: the whole matrix's norm needs a copy of it
                rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), np.float32(1e-12))
            filled = end
        return cls(RowSlots.of(ids[:filled]), (matrix[:filled],))

    def extended(self, removed: RowIds, added: VectorMatrix) -> VectorMatrix:
        """This matrix with ``removed`` rows masked and the rows of ``added`` appended."""
        return VectorMatrix(
            self.rows.changed(removed, added.rows.rowids),
            self.blocks + added.blocks,
            self.scans.shared(),
        )

    def compacted(self) -> VectorMatrix:
        """One block of the live rows, in row id order."""
        keep = self.rows.sorted_slots
        return VectorMatrix(RowSlots.of(self.rows.rowids[keep]), (self._rows(keep),))

    def __len__(self) -> int:
        return self.rows.live_count

    def top_k(
        self, query: Floats, k: int, slots: Slots | None = None, *, background: bool = False
    ) -> list[tuple[int, float]]:
        """(row id, cosine similarity) of the k best live rows (of ``slots`` if given). A
        block's 8-bit scan not built yet is built now, or (``background``) in a thread while
        the whole product answers."""
        one_blas_thread()
        if slots is None:
            scanned = self._scanned_top_k(query, k, background)
            if scanned is not None:
                return scanned
            scores = self._scores(query)
            if self.rows.dead_count:
                slots = self.rows.sorted_slots
                scores = scores[slots]
        elif slots.size * 4 > len(self.rows):  # a broad filter: one product, then pick rows
            scores = self._scores(query)[slots]
        else:  # a selective filter: multiply only the rows it allows
            scores = self._scores_of(slots, query)
        candidates = self.rows.rowids if slots is None else self.rows.rowids[slots]
        if scores.shape[0] == 0 or k <= 0:
            return []
        return ranked_pairs(candidates, scores, best_positions(scores, candidates, k))

    def _scanned_top_k(
        self, query: Floats, k: int, background: bool
    ) -> list[tuple[int, float]] | None:
        """`top_k` of every live row through the blocks' 8-bit scans: the candidates each
        scan proposes (every row of a block without one) rescored exactly; None where no
        block has a scan, or the scans' bounds do not prove the k best are among them."""
        if k <= 0:
            return None
        scans = self.scans.of(self.blocks, background=background)
        if not any(scans):
            return None
        slots, scores, bound, start = [], [], -math.inf, 0
        for block, scan in zip(self.blocks, scans, strict=True):
            if scan is None:
                positions, scored = np.arange(block.shape[0]), block @ query
            else:
                positions, beyond = scan.candidates(query, 2 * k + _SCAN_MARGIN)
                scored, bound = block[positions] @ query, max(bound, beyond)
            slots.append(positions + start)
            scores.append(scored)
            start += block.shape[0]
        found, exact = np.concatenate(slots), np.concatenate(scores)
        if self.rows.dead_count:
            live = self.rows.live[found]
            found, exact = found[live], exact[live]
        candidates = self.rows.rowids[found]
        best = best_positions(exact, candidates, k)
        # Proven when every row was a candidate, or the k-th best beats any row left out.
        if bound > -math.inf and (best.size < k or exact[best[-1]] <= bound):
            return None
        return ranked_pairs(candidates, exact, best)

    def _scores(self, query: Floats) -> Floats:
        if len(self.blocks) == 1:
            return self.blocks[0] @ query
        return np.concatenate([block @ query for block in self.blocks])

    def _scores_of(self, slots: Slots, query: Floats) -> Floats:
        """The scores of these rows, gathered `_GATHER_ROWS` at a time: each piece is
        multiplied while it is still in the CPU cache, not read back from memory."""
        scores = np.empty(slots.shape[0], dtype=np.result_type(self.blocks[0], query))
        for start in range(0, slots.shape[0], _GATHER_ROWS):
            piece = slots[start : start + _GATHER_ROWS]
            scores[start : start + piece.shape[0]] = self._rows(piece) @ query
        return scores

    def _rows(self, slots: Slots) -> Floats:
        if len(self.blocks) == 1:
            return self.blocks[0][slots]
        starts = np.cumsum([0] + [b.shape[0] for b in self.blocks])
        parts = []
        for block, start, end in zip(self.blocks, starts, starts[1:], strict=False):
            inside = slots[(slots >= start) & (slots < end)]
            parts.append(block[inside - start])
        return np.concatenate(parts)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays of a one-block matrix, for `derived.write_arrays`."""
        (matrix,) = self.blocks
        return {"rowids": self.rows.rowids, "live": self.rows.live, "matrix": matrix}

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]]) -> VectorMatrix:
        rows = RowSlots.of(np.asarray(arrays["rowids"]), np.asarray(arrays["live"]))
        # A plain array over the mapped file: every result computed from a `np.memmap` is
        # one too, and each runs Python code as it is made.
        return cls(rows, (np.asarray(arrays["matrix"]),))


def json_ids(rowids: RowIds) -> str:
    """Row ids as a JSON array: one bound parameter however many there are."""
    return "[" + ",".join(map(str, rowids.tolist())) + "]"
