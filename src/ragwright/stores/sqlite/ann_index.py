"""Approximate nearest neighbours: an HNSW graph (faiss) over the stored vectors, a derived
cache like the vector matrix, in a file beside the database (``index.sqlite3.ann``).

The graph only proposes candidates: the store scores them exactly from the vector matrix, so
a hit's score is still its cosine similarity and the graph can hold its vectors as 8-bit codes
(a quarter of the float matrix's memory). Graph ids are row slots (`row_slots`): the build's
rows, then each batch the cache absorbs. Rows added since the graph was built (the tail) are
scored exactly, so a write is found by the next query; removed rows are masked (HNSW cannot
delete), and the graph is built again once a fifth of it is dead.

A graph read from its file is not copied: faiss reads it in place from the memory-mapped
file (a 0.67 GB graph at a million chunks opens in milliseconds, and the serving process
holds only the pages a search touches, until the search ends: `derived.Mapped.release_pages`).
faiss aborts the process when such a graph is extended, so extending one always starts from
an owned copy (`_owned_graph`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.stores.row_slots import RowIds, RowSlots, Slots
from ragwright.stores.sqlite.faiss_library import faiss_module
from ragwright.stores.sqlite.vector_matrix import Floats, VectorMatrix

#: Graph links per node and the beam width while linking (faiss' HNSW parameters).
LINKS = 32
EF_CONSTRUCTION = 64
#: Vectors the 8-bit codes' ranges are learned from (more only costs time).
_TRAINING_ROWS = 50_000
#: A graph with this share of dead slots is built again rather than extended.
_DEAD_SHARE = 0.2


@dataclass(frozen=True)
class AnnIndex:
    rows: RowSlots
    graph: Any  # faiss.IndexHNSWSQ over slots [0, graph.ntotal); None for a delta
    tail: tuple[Floats, ...]  # the vectors of the slots after the graph's, in slot order
    #: The serialized graph that ``graph`` reads in place (its file's mapped bytes: they must
    #: outlive it); None for a graph that owns its memory.
    mapped: npt.NDArray[np.uint8] | None = None

    @classmethod
    def build(cls, vectors: VectorMatrix) -> AnnIndex:
        """A graph over the (one-block) matrix's rows, in its slot order."""
        if len(vectors.blocks) != 1:
            vectors = vectors.compacted()
        return cls(vectors.rows, _graph(np.asarray(vectors.blocks[0])), ())

    @classmethod
    def delta(cls, vectors: VectorMatrix) -> AnnIndex:
        """Rows to append: no graph, their vectors as the tail."""
        return cls(vectors.rows, None, vectors.blocks)

    @classmethod
    def load(cls, db: sqlite3.Connection, dimension: int, *, normalize: bool) -> AnnIndex:
        return cls.build(VectorMatrix.load(db, dimension, normalize=normalize))

    @property
    def graph_size(self) -> int:
        return 0 if self.graph is None else int(self.graph.ntotal)

    def extended(self, removed: RowIds, added: AnnIndex) -> AnnIndex:
        rows = self.rows.changed(removed, added.rows.rowids)
        return AnnIndex(rows, self.graph, self.tail + added.tail, self.mapped)

    def compacted(self) -> AnnIndex:
        """The tail linked into (a copy of) the graph; built again when much of it is dead.
        Never changes this value: a query may be using it."""
        dead = self.graph_size - int(np.count_nonzero(self.rows.live[: self.graph_size]))
        if self.graph is None or dead > _DEAD_SHARE * max(1, self.graph_size):
            keep = self.rows.sorted_slots
            if keep.size == 0:
                return AnnIndex(RowSlots.of(np.empty(0, dtype=np.int64)), None, ())
            return AnnIndex(RowSlots.of(self.rows.rowids[keep]), _graph(self._vectors(keep)), ())
        if not self.tail:
            return self
        graph = self._owned_graph()
        graph.add(np.ascontiguousarray(np.concatenate(self.tail), dtype=np.float32))
        return AnnIndex(self.rows, graph, ())

    def _owned_graph(self) -> Any:
        """A copy of the graph that owns its memory (a clone of a graph read in place would
        still read it in place, and adding to that aborts the process)."""
        faiss = faiss_module()
        if self.mapped is not None:
            return faiss.deserialize_index(self.mapped)
        return faiss.clone_index(self.graph)

    def candidates(
        self, query: Floats, count: int, ef: int, allowed: Slots | None = None
    ) -> RowIds:
        """Row ids of up to ``count`` rows near ``query`` from the graph (searched with beam
        ``ef``), plus the best ``count`` of the tail; of ``allowed`` slots only, if given."""
        found: list[RowIds] = []
        if self.graph_size:
            mask = self._live_graph_bits if allowed is None else self._bits(allowed)
            faiss = faiss_module()
            selector = faiss.IDSelectorBitmap(self.graph_size, faiss.swig_ptr(mask))
            params = faiss.SearchParametersHNSW(efSearch=max(ef, count), sel=selector)
            _, labels = self.graph.search(query.reshape(1, -1), count, params=params)
            slots = labels[0][labels[0] >= 0]
            found.append(self.rows.rowids[slots])
        if self.tail:
            found.append(self._tail_best(query, count, allowed))
        return np.concatenate(found) if found else np.empty(0, dtype=np.int64)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays of a graph with no tail, for `derived.write_arrays`."""
        if self.tail:
            raise ValueError("compact the ANN index before saving it")
        empty = np.empty(0, dtype=np.uint8)
        graph = empty if self.graph is None else faiss_module().serialize_index(self.graph)
        return {"rowids": self.rows.rowids, "live": self.rows.live, "graph": graph}

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]]) -> AnnIndex:
        rows = RowSlots.of(np.asarray(arrays["rowids"]), np.asarray(arrays["live"]))
        code = np.asarray(arrays["graph"])
        graph, mapped = None, None
        if code.size and isinstance(arrays["graph"], np.memmap):  # read in place (see above)
            faiss = faiss_module()
            graph = faiss.read_index(faiss.ZeroCopyIOReader(faiss.swig_ptr(code), code.size), 0)
            mapped = code
        elif code.size:
            graph = faiss_module().deserialize_index(code)
        if (0 if graph is None else graph.ntotal) != len(rows):
            raise ValueError("the graph and its row ids disagree")
        return cls(rows, graph, (), mapped)

    @cached_property
    def _live_graph_bits(self) -> npt.NDArray[np.uint8]:
        return np.packbits(self.rows.live[: self.graph_size], bitorder="little")

    def _bits(self, slots: Slots) -> npt.NDArray[np.uint8]:
        inside = np.zeros(self.graph_size, dtype=bool)
        inside[slots[slots < self.graph_size]] = True
        return np.packbits(inside, bitorder="little")

    def _tail_best(self, query: Floats, count: int, allowed: Slots | None) -> RowIds:
        vectors = np.concatenate(self.tail)
        slots = np.arange(self.graph_size, len(self.rows))
        keep = self.rows.live[slots]
        if allowed is not None:  # a mask, not np.isin (which sorts ``allowed`` every query)
            inside = np.zeros(len(self.rows), dtype=bool)
            inside[allowed] = True
            keep &= inside[slots]
        slots, vectors = slots[keep], vectors[keep]
        if slots.size > count:
            scores = vectors @ query
            slots = slots[np.argpartition(-scores, count - 1)[:count]]
        return self.rows.rowids[slots]

    def _vectors(self, slots: Slots) -> Floats:
        """The vectors of these slots: decoded from the graph's codes, or from the tail."""
        parts = []
        inside = slots[slots < self.graph_size]
        if inside.size:
            decoded = self.graph.reconstruct_batch(inside.astype(np.int64))
            parts.append(np.asarray(decoded, dtype=np.float32))
        if self.tail:
            tail = np.concatenate(self.tail)
            parts.append(tail[slots[slots >= self.graph_size] - self.graph_size])
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)


def _graph(vectors: Floats) -> Any:
    """An HNSW graph over 8-bit codes of ``vectors`` (inner product: they are unit length);
    None for no vectors (the codes' ranges need some to learn from)."""
    if vectors.shape[0] == 0:
        return None
    faiss = faiss_module()
    dimension = vectors.shape[1]
    graph = faiss.IndexHNSWSQ(
        dimension, faiss.ScalarQuantizer.QT_8bit, LINKS, faiss.METRIC_INNER_PRODUCT
    )
    graph.hnsw.efConstruction = EF_CONSTRUCTION
    step = max(1, vectors.shape[0] // _TRAINING_ROWS)
    graph.train(np.ascontiguousarray(vectors[::step]))
    graph.add(np.ascontiguousarray(vectors))
    return graph
