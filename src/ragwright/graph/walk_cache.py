"""The walk's links of the latest snapshot (`WalkGraphCache`), built once per graph version;
for a snapshot a store patched (`GraphSnapshot.change`) they are made from the links of the
snapshot it was patched from: the rows of the entities and chunks whose links
changed are built afresh, every other row is the old one renumbered (its links and their
chances are the same, and the renumbering keeps their order). The result equals
`ppr.build_walk_graph` of the new snapshot, entry for entry, for a few vectorized passes over
the links instead of scipy's sort of all of them.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
import numpy.typing as npt

from ragwright.graph.adjacency import Adjacency
from ragwright.graph.model import GraphSnapshot, SnapshotChange
from ragwright.graph.ppr import WalkGraph, build_walk_graph, walk_links

Int64s = npt.NDArray[np.int64]
log = logging.getLogger(__name__)


class WalkGraphCache:
    """The walk graph of the latest snapshot, rebuilt when its version or weights change
    (patched when the new snapshot was patched from the cached one's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, float, float] | None = None
        self._graph: WalkGraph | None = None

    def get(
        self, snapshot: GraphSnapshot, *, relation_weight: float, synonym_weight: float
    ) -> WalkGraph:
        key = (snapshot.version, relation_weight, synonym_weight)
        with self._lock:
            if self._graph is None or self._key != key:
                self._graph = self._built(snapshot, relation_weight, synonym_weight)
                self._key = key
            return self._graph

    def _built(
        self, snapshot: GraphSnapshot, relation_weight: float, synonym_weight: float
    ) -> WalkGraph:
        change, old = snapshot.change, self._graph
        same_weights = self._key is not None and self._key[1:] == (relation_weight, synonym_weight)
        if change is not None and old is not None and same_weights:
            try:
                return patched_walk_graph(
                    old, snapshot, change,
                    relation_weight=relation_weight, synonym_weight=synonym_weight,
                )  # fmt: skip
            except StaleLinks as why:
                log.debug("walk graph built whole: %s", why)
        return build_walk_graph(
            snapshot, relation_weight=relation_weight, synonym_weight=synonym_weight
        )


class StaleLinks(Exception):
    """The old links do not fit the change (build the walk graph whole instead)."""


def patched_walk_graph(
    old: WalkGraph,
    snapshot: GraphSnapshot,
    change: SnapshotChange,
    *,
    relation_weight: float,
    synonym_weight: float,
) -> WalkGraph:
    """The walk graph of ``snapshot``, patched from ``old`` (the walk graph of the snapshot
    at ``change.base``, with the same weights)."""
    if old.version != change.base or len(change.entity_map) != old.entities:
        raise StaleLinks("the walk graph is not of the snapshot the change starts from")
    if len(change.chunk_map) != old.chunks:
        raise StaleLinks("the walk graph is not of the snapshot the change starts from")
    entities, chunks = snapshot.entity_count, snapshot.chunk_count
    chunk_nodes = np.where(change.chunk_map >= 0, change.chunk_map + entities, -1)
    node_map = np.concatenate([change.entity_map, chunk_nodes])
    fresh = np.zeros(entities + chunks, dtype=bool)
    fresh[change.entities] = True
    fresh[change.chunks + entities] = True
    rows, cols, data = walk_links(snapshot, relation_weight, synonym_weight)
    wanted = fresh[rows]
    links = Adjacency.from_coordinates(
        rows[wanted], cols[wanted], data[wanted], (entities + chunks, entities + chunks)
    ).normalized()
    transition = _combined(old.transition, node_map, node_map, fresh, links)
    changed_chunks = np.zeros(chunks, dtype=bool)
    changed_chunks[change.chunks] = True
    mentioned = changed_chunks[snapshot.mention_chunk]
    chunk_entities = _combined(
        old.chunk_entities,
        change.chunk_map,
        change.entity_map,
        changed_chunks,
        Adjacency.from_coordinates(
            snapshot.mention_chunk[mentioned],
            snapshot.mention_entity[mentioned],
            snapshot.mention_count[mentioned],
            (chunks, entities),
        ),
    )
    frequency = np.bincount(snapshot.mention_entity, minlength=entities).astype(np.float32)
    return WalkGraph(snapshot.version, entities, chunks, transition, chunk_entities, frequency)


def _combined(
    old: Adjacency, row_map: Int64s, column_map: Int64s, fresh: npt.NDArray[np.bool_],
    new: Adjacency,
) -> Adjacency:  # fmt: skip
    """Rows marked ``fresh`` from ``new``, the others from ``old`` (old row ``i`` is row
    ``row_map[i]`` now, its columns renumbered by ``column_map``)."""
    source = np.full(len(fresh), -1, dtype=np.int64)
    kept = np.flatnonzero(row_map >= 0)
    source[row_map[kept]] = kept
    if (source[~fresh] < 0).any():
        raise StaleLinks("a row the change does not name has no old row")
    counts, starts = new.counts.copy(), new.pointers[:-1].copy()
    counts[~fresh] = old.counts[source[~fresh]]
    starts[~fresh] = old.pointers[source[~fresh]]
    pointers = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    owner = np.repeat(np.arange(len(fresh), dtype=np.int64), counts)
    positions = np.arange(int(pointers[-1]), dtype=np.int64) - pointers[owner] + starts[owner]
    from_new = fresh[owner]
    columns = np.empty(len(owner), dtype=np.int64)
    values = np.empty(len(owner), dtype=np.float32)
    columns[from_new] = new.columns[positions[from_new]]
    values[from_new] = new.values[positions[from_new]]
    from_old = positions[~from_new]
    columns[~from_new] = column_map[old.columns[from_old]]
    values[~from_new] = old.values[from_old]
    if (columns < 0).any():
        raise StaleLinks("a row the change does not name links to a removed node")
    return Adjacency(pointers, columns.astype(np.int32), values)
