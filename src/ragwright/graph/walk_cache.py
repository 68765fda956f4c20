"""The walk's links of the latest snapshot (`WalkGraphCache`), built once per graph version;
for a snapshot a store patched (`GraphSnapshot.change`) they are made from the links of the
snapshot it was patched from: the rows of the entities and chunks whose links
changed are built afresh, every other row is the old one renumbered (its links and their
chances are the same, and the renumbering keeps their order). The result equals
`ppr.build_walk_graph` of the new snapshot, entry for entry, for a few vectorized passes over
the links instead of scipy's sort of all of them.
"""

from __future__ import annotations

import dataclasses
import logging
import threading

import numpy as np
import numpy.typing as npt

from ragwright.graph.adjacency import Adjacency
from ragwright.graph.ppr import WalkGraph, build_walk_graph, walk_links
from ragwright.models.graph import GraphSnapshot, SnapshotChange

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
    rows, cols, data = walk_links(_touching(snapshot, fresh), relation_weight, synonym_weight)
    wanted = fresh[rows]
    links = Adjacency.from_coordinates(
        rows[wanted], cols[wanted], data[wanted], (entities + chunks, entities + chunks)
    ).normalized()
    transition = _combined(old.transition, node_map, node_map, fresh, links)
    changed = fresh[entities:]
    mentioned = changed[snapshot.mention_chunk]
    fresh_chunks = Adjacency.from_coordinates(
        snapshot.mention_chunk[mentioned],
        snapshot.mention_entity[mentioned],
        snapshot.mention_count[mentioned],
        (chunks, entities),
    )
    chunk_entities = _combined(
        old.chunk_entities, change.chunk_map, change.entity_map, changed, fresh_chunks
    )
    frequency = np.bincount(snapshot.mention_entity, minlength=entities).astype(np.float32)
    return WalkGraph(snapshot.version, entities, chunks, transition, chunk_entities, frequency)


def _touching(snapshot: GraphSnapshot, fresh: npt.NDArray[np.bool_]) -> GraphSnapshot:
    """The snapshot with only the mentions, edges and synonym links of ``fresh`` nodes."""
    entities = snapshot.entity_count
    mentions = fresh[snapshot.mention_entity] | fresh[snapshot.mention_chunk + entities]
    edges = fresh[snapshot.edge_source] | fresh[snapshot.edge_target]
    synonyms = fresh[snapshot.synonym_source] | fresh[snapshot.synonym_target]
    return dataclasses.replace(
        snapshot,
        mention_entity=snapshot.mention_entity[mentions],
        mention_chunk=snapshot.mention_chunk[mentions],
        mention_count=snapshot.mention_count[mentions],
        edge_source=snapshot.edge_source[edges],
        edge_target=snapshot.edge_target[edges],
        edge_weight=snapshot.edge_weight[edges],
        synonym_source=snapshot.synonym_source[synonyms],
        synonym_target=snapshot.synonym_target[synonyms],
        synonym_weight=snapshot.synonym_weight[synonyms],
        change=None,
    )


def _combined(
    old: Adjacency, row_map: Int64s, column_map: Int64s, fresh: npt.NDArray[np.bool_],
    new: Adjacency,
) -> Adjacency:  # fmt: skip
    """Rows marked ``fresh`` from ``new``, the others from ``old`` (old row ``i`` is row
    ``row_map[i]`` now, its columns renumbered by ``column_map``). The renumbering keeps
    the rows' order, so the result is the old entries with the dropped rows' runs cut out
    and the fresh rows' runs put in: a few slices, not a pass per entry."""
    source = np.full(len(fresh), -1, dtype=np.int64)
    kept = np.flatnonzero(row_map >= 0)
    source[row_map[kept]] = kept
    if (source[~fresh] < 0).any():
        raise StaleLinks("a row the change does not name has no old row")
    counts = new.counts.copy()
    counts[~fresh] = old.counts[source[~fresh]]
    pointers = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    stays = row_map >= 0
    stays[kept] = ~fresh[row_map[kept]]
    dropped = np.flatnonzero(~stays)
    # where fresh row r goes among the old rows: before the first old row numbered r or more
    placed = np.maximum.accumulate(np.where(row_map >= 0, row_map, -1))
    fresh_rows = np.flatnonzero(fresh)
    at = old.pointers[np.searchsorted(placed, fresh_rows, side="left")]
    cuts = sorted(
        [(int(old.pointers[i]), 1, int(i)) for i in dropped]
        + [(int(p), 0, int(r)) for p, r in zip(at, fresh_rows, strict=True)]
    )
    mapped = column_map[old.columns]
    columns: list[npt.NDArray[np.int64]] = []
    values: list[npt.NDArray[np.float32]] = []
    cursor = 0
    for position, kind, row in cuts:
        if position > cursor:
            columns.append(mapped[cursor:position])
            values.append(old.values[cursor:position])
        cursor = max(cursor, position)
        if kind == 0:
            start, end = new.pointers[row], new.pointers[row + 1]
            columns.append(new.columns[start:end].astype(np.int64))
            values.append(new.values[start:end])
        else:
            cursor = max(cursor, int(old.pointers[row + 1]))
    columns.append(mapped[cursor:])
    values.append(old.values[cursor:])
    joined = np.concatenate(columns)
    if len(joined) != pointers[-1] or (joined < 0).any():
        raise StaleLinks("a row the change does not name links to a removed node")
    return Adjacency(pointers, joined.astype(np.int32), np.concatenate(values))
