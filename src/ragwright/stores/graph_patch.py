"""Bringing a cached `GraphSnapshot` up to date with the facts that changed since, instead of
reading the whole graph again: what a store's change log names (chunks whose facts changed,
keys whose synonym links changed) and the current facts of just those, applied to the cached
arrays.

The result is the snapshot a full read would assemble (`graph_snapshot.assemble`), array for
array: entities stay sorted by key and chunks by id, mentions by (chunk, entity), edges and
synonym links by (source, target), so everything derived from it (the walk's links, graph
search's ranking) is the same too. The index maps only shift, so kept rows stay in order and
the new ones are merged in: the cost is a few vectorized passes over the arrays and SQL for
the changed chunks alone, where a full read groups every fact of the graph.

Two steps, with the store's reads between them: `plan_patch` says which entity keys and
pairs the change touches (the keys the changed chunks mentioned before and mention now, the
pairs of each chunk's keys: a relation joins two keys of one chunk), the store reads their
current names, edges and synonym links, and `apply_patch` builds the snapshot. A merge is
applied when the graph is read, over whole groups: a change touching a merged key is
`PatchRefused` and the store reads everything.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ragwright.models.graph import GraphSnapshot, SnapshotChange
from ragwright.models.graph_records import EDGE_WEIGHT_CAP, WEIGHT_UNITS
from ragwright.stores.graph_snapshot import typed_snapshot

T = TypeVar("T")
Int64s = npt.NDArray[np.int64]

#: (chunk id, entity key, how often the chunk mentions it)
Incidence = tuple[str, str, int]
#: (key, key, weight in `WEIGHT_UNITS`) and (key, key, score)
EdgeRow = tuple[str, str, int]
SynonymRow = tuple[str, str, float]


class PatchRefused(Exception):
    """The change cannot be applied to the cached snapshot (it touches a merge, or the
    store's rows contradict the snapshot): read the whole graph instead."""


@dataclass(frozen=True, slots=True)
class FactChanges:
    """What changed after a cached snapshot, as a store's log says: ``chunks``, the ids of
    the chunks whose facts changed (their facts in the snapshot, if any, are dropped);
    ``incidence``, the current facts of those that still have mentions; ``keys``, the
    entities whose synonym links changed."""

    chunks: Collection[str]
    incidence: Sequence[Incidence]
    keys: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class PatchPlan:
    """The entity keys (sorted) and the key pairs (each in key order, sorted) whose current
    rows the store reads for `apply_patch`."""

    keys: list[str]
    pairs: list[tuple[str, str]]


def plan_patch(
    snapshot: GraphSnapshot, changes: FactChanges, merged: Collection[str] = ()
) -> PatchPlan:
    """The keys and pairs ``changes`` touch; `PatchRefused` when one of the keys is in a
    merge (``merged``: every key a current merge decision names)."""
    old = _old_chunk_keys(snapshot, changes.chunks)
    new: dict[str, set[str]] = {}
    for chunk_id, key, _ in changes.incidence:
        new.setdefault(chunk_id, set()).add(key)
    keys: set[str] = set(changes.keys)
    pairs: set[tuple[str, str]] = set()
    for group in itertools.chain(old.values(), new.values()):
        keys |= group
        pairs.update(itertools.combinations(sorted(group), 2))
    if not keys.isdisjoint(merged):
        raise PatchRefused("the change touches a merged entity")
    return PatchPlan(sorted(keys), sorted(pairs))


def apply_patch(
    snapshot: GraphSnapshot,
    changes: FactChanges,
    plan: PatchPlan,
    *,
    version: str,
    names: Mapping[str, str],
    edges: Sequence[EdgeRow],
    synonyms: Sequence[SynonymRow],
) -> GraphSnapshot:
    """``snapshot`` with ``changes`` applied. The store read, in the same transaction as
    ``changes``: ``names``, the display name of each key of ``plan.keys`` that is an entity
    now (one missing is gone); ``edges``, the current weight of each pair of ``plan.pairs``
    that has relations; ``synonyms``, the current links with an end in ``plan.keys`` (both
    ends entities now)."""
    entities = _Renumbering.of(snapshot.entity_keys, plan.keys, set(names), replace=False)
    new_chunks = sorted({chunk_id for chunk_id, _, _ in changes.incidence})
    chunks = _Renumbering.of(
        snapshot.chunk_ids,
        sorted(set(changes.chunks) | set(new_chunks)),
        set(new_chunks),
        replace=True,
    )
    keys = entities.items
    named = [names[key] for key in entities.inserted]
    entity_names = _splice(snapshot.entity_names, entities.dropped, entities.positions, named)
    staying = [key for key in plan.keys if key in names]
    for key, position in zip(staying, entities.new_index(staying).tolist(), strict=True):
        entity_names[position] = names[key]  # its forms may have changed
    mention_entity, mention_chunk, mention_count = _mentions(snapshot, changes, entities, chunks)
    edge_source, edge_target, edge_weight = _pairs(
        (snapshot.edge_source, snapshot.edge_target, snapshot.edge_weight),
        _stale_pairs(snapshot, plan.pairs, entities),
        [(a, b, min(w / WEIGHT_UNITS, EDGE_WEIGHT_CAP)) for a, b, w in edges],
        entities,
        keys,
        best=False,
    )
    unlinked = _touching(snapshot.synonym_source, snapshot.synonym_target, entities.stale)
    synonym_source, synonym_target, synonym_weight = _pairs(
        (snapshot.synonym_source, snapshot.synonym_target, snapshot.synonym_weight),
        unlinked,
        list(synonyms),
        entities,
        keys,
        best=True,
    )
    relinked = np.concatenate(
        [
            entities.new_index(staying),
            entities.new_index([key for a, b, _ in synonyms for key in (a, b)]),
            entities.old_to_new[snapshot.synonym_source[unlinked]],
            entities.old_to_new[snapshot.synonym_target[unlinked]],
        ]
    )
    change = SnapshotChange(
        base=snapshot.version,
        entity_map=entities.old_to_new,
        chunk_map=chunks.old_to_new,
        entities=np.unique(relinked[relinked >= 0]),
        chunks=chunks.new_index(new_chunks),
    )
    return typed_snapshot(
        version,
        keys,
        entity_names,
        chunks.items,
        (mention_entity, mention_chunk, mention_count),
        (edge_source, edge_target, edge_weight),
        (synonym_source, synonym_target, synonym_weight),
        change,
    )


@dataclass(frozen=True, slots=True)
class _Renumbering:
    """A sorted sequence with some items taken out (``dropped``: their old positions) and
    some put in (``inserted``, sorted, before the old ``positions``): the new ``items`` and
    ``old_to_new`` (-1 for a dropped item). ``stale``: the old positions of every item the
    change names (the dropped ones and those that stay)."""

    items: list[str]
    dropped: list[int]
    inserted: list[str]
    positions: list[int]
    old_to_new: Int64s
    stale: Int64s

    @classmethod
    def of(
        cls, old: Sequence[str], touched: Sequence[str], present: set[str], *, replace: bool
    ) -> _Renumbering:
        """``touched`` (sorted) items change: those not in ``present`` go, those in it
        are there after; with ``replace`` one that stays is taken out and put in again (a
        chunk, whose old mentions go), else it keeps its place (an entity)."""
        found = [(item, _find(old, item)) for item in touched]
        stale = [p for _, p in found if p is not None]
        dropped = [p for i, p in found if p is not None and (replace or i not in present)]
        inserted = [i for i, p in found if i in present and (replace or p is None)]
        positions = [bisect.bisect_left(old, item) for item in inserted]
        keep = np.ones(len(old), dtype=bool)
        keep[dropped] = False
        before = np.concatenate([[0], np.cumsum(keep)])
        shift = np.searchsorted(np.asarray(positions, dtype=np.int64), np.arange(len(old)), "right")
        old_to_new = np.where(keep, before[:-1] + shift, -1).astype(np.int64)
        items = _splice(old, dropped, positions, inserted)
        return cls(items, dropped, inserted, positions, old_to_new, np.asarray(stale, np.int64))

    def new_index(self, items: Sequence[str]) -> Int64s:
        """The new positions of ``items`` (each must be there)."""
        found = np.fromiter((bisect.bisect_left(self.items, i) for i in items), np.int64)
        for item, position in zip(items, found.tolist(), strict=True):
            if position >= len(self.items) or self.items[position] != item:
                raise PatchRefused(f"{item!r} is not in the graph the store read")
        return found


def _find(items: Sequence[str], item: str) -> int | None:
    position = bisect.bisect_left(items, item)
    return position if position < len(items) and items[position] == item else None


def _splice(
    old: Sequence[T], dropped: Sequence[int], positions: Sequence[int], inserted: Sequence[T]
) -> list[T]:
    """``old`` without the items at ``dropped`` (ascending) and with ``inserted[i]`` put
    before ``old[positions[i]]`` (ascending), in slices rather than an item at a time."""
    out: list[T] = []
    cursor = 0
    cuts = sorted(
        [(p, 1, i) for i, p in enumerate(dropped)] + [(p, 0, i) for i, p in enumerate(positions)]
    )
    for position, kind, i in cuts:
        out.extend(old[cursor:position])
        cursor = max(cursor, position)
        if kind == 0:
            out.append(inserted[i])
        else:
            cursor = position + 1
    out.extend(old[cursor:])
    return out


def _old_chunk_keys(snapshot: GraphSnapshot, chunk_ids: Collection[str]) -> dict[str, set[str]]:
    """The keys each of these chunks mentions in the snapshot (mentions sorted by chunk)."""
    found: dict[str, set[str]] = {}
    for chunk_id in chunk_ids:
        position = _find(snapshot.chunk_ids, chunk_id)
        if position is None:
            continue
        start, end = np.searchsorted(snapshot.mention_chunk, [position, position + 1])
        found[chunk_id] = {snapshot.entity_keys[e] for e in snapshot.mention_entity[start:end]}
    return found


def _mentions(
    snapshot: GraphSnapshot, changes: FactChanges, entities: _Renumbering, chunks: _Renumbering
) -> tuple[Int64s, Int64s, npt.NDArray[np.float64]]:
    kept = chunks.old_to_new[snapshot.mention_chunk] >= 0
    entity = entities.old_to_new[snapshot.mention_entity[kept]]
    if (entity < 0).any():
        raise PatchRefused("an unchanged chunk mentions an entity the store no longer has")
    chunk = chunks.old_to_new[snapshot.mention_chunk[kept]]
    count = snapshot.mention_count[kept].astype(np.float64)
    rows = sorted(changes.incidence)
    added_chunk = chunks.new_index([r[0] for r in rows])
    added_entity = entities.new_index([r[1] for r in rows])
    added_count = np.array([r[2] for r in rows], dtype=np.float64)
    width = max(len(entities.items), 1)
    order = np.argsort(added_chunk * width + added_entity, kind="stable")
    at = np.searchsorted(chunk * width + entity, (added_chunk * width + added_entity)[order])
    return (
        np.insert(entity, at, added_entity[order]),
        np.insert(chunk, at, added_chunk[order]),
        np.insert(count, at, added_count[order]),
    )


def _stale_pairs(
    snapshot: GraphSnapshot, pairs: Sequence[tuple[str, str]], entities: _Renumbering
) -> npt.NDArray[np.bool_]:
    """Which snapshot edges are among ``pairs`` (their weights are read again)."""
    stale = np.zeros(len(snapshot.edge_source), dtype=bool)
    old = [(_find(snapshot.entity_keys, a), _find(snapshot.entity_keys, b)) for a, b in pairs]
    known = [(a, b) for a, b in old if a is not None and b is not None]
    if not known or not len(stale):
        return stale
    width = max(snapshot.entity_count, 1)
    codes = snapshot.edge_source.astype(np.int64) * width + snapshot.edge_target
    wanted = np.array([min(a, b) * width + max(a, b) for a, b in known], dtype=np.int64)
    found = np.searchsorted(codes, wanted)
    found = found[found < len(codes)]
    stale[found[np.isin(codes[found], wanted)]] = True
    return stale


def _touching(sources: npt.NDArray[np.int32], targets: npt.NDArray[np.int32], nodes: Int64s) -> (
    npt.NDArray[np.bool_]
):  # fmt: skip
    return np.isin(sources, nodes) | np.isin(targets, nodes)


def _pairs(
    old: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.float32]],
    stale: npt.NDArray[np.bool_],
    rows: Sequence[tuple[str, str, float]],
    entities: _Renumbering,
    keys: Sequence[str],
    *,
    best: bool,
) -> tuple[Int64s, Int64s, npt.NDArray[np.float64]]:
    """Undirected pairs (source < target, sorted) with the ``stale`` ones replaced by
    ``rows`` (keys; a pair given twice keeps its ``best`` value, else their sum)."""
    keep = ~stale
    source = entities.old_to_new[old[0][keep]]
    target = entities.old_to_new[old[1][keep]]
    value = old[2][keep].astype(np.float64)
    if (source < 0).any() or (target < 0).any():
        raise PatchRefused("a link the change does not name ends at a removed entity")
    combined: dict[tuple[int, int], list[float]] = {}
    ends = entities.new_index([k for a, b, _ in rows for k in (a, b)]) if rows else None
    for i, (_, _, weight) in enumerate(rows):
        assert ends is not None
        a, b = int(ends[2 * i]), int(ends[2 * i + 1])
        if a != b:
            combined.setdefault((min(a, b), max(a, b)), []).append(float(weight))
    pairs = sorted(combined)
    width = max(len(keys), 1)
    added_source = np.array([a for a, _ in pairs], dtype=np.int64)
    added_target = np.array([b for _, b in pairs], dtype=np.int64)
    added_value = np.array(
        [max(combined[p]) if best else sum(combined[p]) for p in pairs], dtype=np.float64
    )
    at = np.searchsorted(source * width + target, added_source * width + added_target)
    return (
        np.insert(source, at, added_source),
        np.insert(target, at, added_target),
        np.insert(value, at, added_value),
    )
