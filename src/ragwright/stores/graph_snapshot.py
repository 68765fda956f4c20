"""The `GraphSnapshot` both stores build: arrays read from SQL in bulk (never a Python object
per mention), turned into dense indices, with the user's merges applied.

A merge is applied here, when the graph is read, not to the stored evidence: merged entities
become one (the most mentioned key names it), their incidences and edges are summed, edges
inside the merge vanish. Undoing a merge (a later unmerge) is then only a recorded decision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.graph.synonyms import synonym_links
from ragwright.models.graph import GraphSnapshot, SnapshotChange
from ragwright.models.graph_records import EDGE_WEIGHT_CAP, WEIGHT_UNITS

Int64s = npt.NDArray[np.int64]


def float_triples(text: str | None) -> npt.NDArray[np.float64]:
    """``"a,b,c,a,b,c,…"`` (one SQL ``group_concat``) as an (n, 3) array, parsed by numpy:
    no Python object per row."""
    if not text:
        return np.zeros((0, 3), dtype=np.float64)
    flat: npt.NDArray[np.float64] = np.fromstring(text, dtype=np.float64, sep=",")
    return flat.reshape(-1, 3)


def int_triples(text: str | None) -> npt.NDArray[np.int64]:
    """`float_triples` of integers (ids and counts below 2**53, so exact)."""
    return float_triples(text).astype(np.int64)


@dataclass(frozen=True, slots=True)
class SnapshotRows:
    """What a store read, ids being its own integers (entity ids, chunk row ids)."""

    version: str
    entity_ids: Int64s  # in entity order (by key)
    entity_keys: Sequence[str]
    entity_names: Sequence[str]
    entity_mentions: Int64s
    chunk_rowids: Int64s  # in chunk order (by chunk id)
    chunk_ids: Sequence[str]
    #: (chunk rowid, entity id, count) rows.
    incidence: npt.NDArray[np.int64]
    #: (entity id, entity id, weight in `WEIGHT_UNITS`) rows.
    edges: npt.NDArray[np.int64]
    #: (entity id, entity id, score) rows.
    synonyms: npt.NDArray[np.float64]
    #: Pairs of keys the user merged (current decisions).
    merges: Sequence[tuple[str, str]]


def assemble(rows: SnapshotRows) -> GraphSnapshot:
    """The snapshot: the store's ids mapped to dense indices, merges collapsed, edge
    weights capped."""
    keys = list(rows.entity_keys)
    names = list(rows.entity_names)
    representative = _merge_map(keys, rows.entity_mentions, rows.merges)
    kept = np.unique(representative)
    dense = np.full(len(keys), -1, dtype=np.int64)
    dense[kept] = np.arange(len(kept))
    entity_index = dense[representative]  # stored entity position -> snapshot index

    def entities(ids: npt.NDArray[np.generic]) -> Int64s:
        positions = _positions(rows.entity_ids, ids.astype(np.int64))
        return np.asarray(entity_index[positions], dtype=np.int64)

    chunk_positions = _positions(rows.chunk_rowids, rows.incidence[:, 0])
    mention_entity = entities(rows.incidence[:, 1])
    mention_chunk, mention_entity, mention_count = _summed(
        chunk_positions, mention_entity, rows.incidence[:, 2].astype(np.float64)
    )
    edge_source, edge_target, edge_weight = _undirected(
        entities(rows.edges[:, 0]), entities(rows.edges[:, 1]), rows.edges[:, 2] / WEIGHT_UNITS
    )
    edge_weight = np.minimum(edge_weight, EDGE_WEIGHT_CAP)
    synonym_source, synonym_target, synonym_weight = _undirected(
        entities(rows.synonyms[:, 0]), entities(rows.synonyms[:, 1]), rows.synonyms[:, 2], "max"
    )
    return typed_snapshot(
        rows.version,
        [keys[i] for i in kept],
        [names[i] for i in kept],
        rows.chunk_ids,
        (mention_entity, mention_chunk, mention_count),
        (edge_source, edge_target, edge_weight),
        (synonym_source, synonym_target, synonym_weight),
    )


Triple = tuple[npt.NDArray[np.generic], npt.NDArray[np.generic], npt.NDArray[np.generic]]


def typed_snapshot(
    version: str,
    keys: Sequence[str],
    names: Sequence[str],
    chunk_ids: Sequence[str],
    mentions: Triple,
    edges: Triple,
    synonyms: Triple,
    change: SnapshotChange | None = None,
) -> GraphSnapshot:
    """The snapshot with its arrays in their kept types: int32 positions, float32 weights.
    ``mentions`` are (entity, chunk, count); ``edges`` and ``synonyms`` (source, target,
    weight)."""
    (mention_entity, mention_chunk, mention_count) = mentions
    return GraphSnapshot(
        version=version,
        entity_keys=tuple(keys),
        entity_names=tuple(names),
        chunk_ids=tuple(chunk_ids),
        mention_entity=mention_entity.astype(np.int32),
        mention_chunk=mention_chunk.astype(np.int32),
        mention_count=mention_count.astype(np.float32),
        edge_source=edges[0].astype(np.int32),
        edge_target=edges[1].astype(np.int32),
        edge_weight=edges[2].astype(np.float32),
        synonym_source=synonyms[0].astype(np.int32),
        synonym_target=synonyms[1].astype(np.int32),
        synonym_weight=synonyms[2].astype(np.float32),
        change=change,
    )


def _positions(sorted_or_not: Int64s, ids: Int64s) -> Int64s:
    order = np.argsort(sorted_or_not, kind="stable")
    found = np.searchsorted(sorted_or_not, ids, sorter=order)
    return np.asarray(order[found], dtype=np.int64)


def _summed(
    rows: Int64s, columns: Int64s, values: npt.NDArray[np.float64]
) -> tuple[Int64s, Int64s, npt.NDArray[np.float64]]:
    """(row, column) pairs made unique, their values summed, sorted by row then column."""
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float64)
    pairs = np.stack([rows, columns], axis=1)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    summed = np.zeros(len(unique), dtype=np.float64)
    np.add.at(summed, inverse.reshape(-1), values)
    return unique[:, 0], unique[:, 1], summed


def _undirected(
    sources: Int64s, targets: Int64s, values: npt.NDArray[np.float64], how: str = "sum"
) -> tuple[Int64s, Int64s, npt.NDArray[np.float64]]:
    """Edges with ``source < target`` (self-loops, left by a merge, dropped), duplicates
    combined by ``how`` (summed weights, or the best synonym score)."""
    low, high = np.minimum(sources, targets), np.maximum(sources, targets)
    keep = low != high
    low, high, values = low[keep], high[keep], values[keep]
    if how == "sum":
        return _summed(low, high, values)
    if len(low) == 0:
        return low, high, values
    pairs = np.stack([low, high], axis=1)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    best = np.zeros(len(unique), dtype=np.float64)
    np.maximum.at(best, inverse.reshape(-1), values)
    return unique[:, 0], unique[:, 1], best


def _merge_map(keys: list[str], mentions: Int64s, merges: Iterable[tuple[str, str]]) -> Int64s:
    """Each entity position -> the position of its merge group's representative (the most
    mentioned member, then the smallest key): a union-find over the merged pairs."""
    position = {key: i for i, key in enumerate(keys)}
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def better(i: int, j: int) -> bool:
        return (int(mentions[i]), keys[j]) > (int(mentions[j]), keys[i])

    for first, second in merges:
        if first not in position or second not in position:
            continue  # one side has no mentions now; the decision waits for it
        a, b = root(position[first]), root(position[second])
        if a != b:
            winner, loser = (a, b) if better(a, b) else (b, a)
            parent[loser] = winner
    return np.array([root(i) for i in range(len(keys))], dtype=np.int64)


def scoped_version(version: str, readable: object) -> str:
    """The version of a caller's view of the graph at ``version`` (`readable`: its
    permissions): another token than the whole graph's, so nothing cached by version mixes
    them."""
    digest = hashlib.sha256(repr(readable).encode()).hexdigest()[:16]
    return f"{version}~{digest}"


def scoped_synonyms(
    keys: Sequence[str], ids: Int64s, decisions: Iterable[tuple[str, str, str]]
) -> npt.NDArray[np.float64]:
    """The synonym links among ``keys`` (entity ids ``ids``) as (id, id, score) rows, made
    afresh over these keys alone as linking them in one pass makes them (`synonym_links`),
    less the pairs whose latest decision is an unmerge: those of a caller's view of the graph,
    where links the stored ones hold because of keys it may not read must not show."""
    latest: dict[tuple[str, str], str] = {}
    for source, target, decision in decisions:
        latest[(source, target)] = decision
    refused = {pair for pair, decision in latest.items() if decision == "unmerge"}
    id_of = dict(zip(keys, ids.tolist(), strict=True))
    rows = [
        (float(id_of[a]), float(id_of[b]), score)
        for a, b, score in synonym_links(keys, keys)
        if (a, b) not in refused
    ]
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


def current_merges(decisions: Iterable[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The merged pairs among decisions ``(source, target, decision)`` given oldest first:
    a pair's latest decision counts."""
    latest: dict[tuple[str, str], str] = {}
    for source, target, decision in decisions:
        latest[(source, target)] = decision
    return sorted(pair for pair, decision in latest.items() if decision == "merge")
