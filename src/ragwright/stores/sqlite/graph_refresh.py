"""The SQLite store's cached graph snapshot, kept current by replaying ``graph_changes``
(`graph_schema.GRAPH_CHANGES_DDL`) instead of reading every fact again after each write.

A replay reads the changed chunks' mentions by chunk row, the touched entities' names, the
touched pairs' edges and the touched entities' synonym links, each through an index, and
patches the cached arrays (`graph_patch`): its cost follows the change, not the graph. The
whole graph is read instead for the first snapshot, after a merge decision, when the log no
longer reaches back to the cached one (pruned), or when more changed than a replay is worth.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from ragwright.models.graph import GraphSnapshot
from ragwright.stores.graph_patch import FactChanges, PatchRefused, apply_patch, plan_patch
from ragwright.stores.graph_snapshot import SnapshotRows, assemble
from ragwright.stores.sqlite.graph_schema import GRAPH_CHANGES_KEPT

_NAMES = (
    "SELECT e.key, (SELECT f.form FROM graph_entity_forms f WHERE f.key = e.key "
    "GROUP BY f.form ORDER BY sum(f.mentions) DESC, f.form LIMIT 1) FROM graph_entities e "
    "WHERE e.key IN (SELECT value FROM json_each(?))"
)
_INCIDENCE = (
    "SELECT m.chunk_rowid, m.key, count(*) FROM graph_mentions m "
    "WHERE m.chunk_rowid IN (SELECT value FROM json_each(?)) GROUP BY m.chunk_rowid, m.key"
)
_EDGES = (
    "SELECT g.source, g.target, g.weight FROM json_each(?) j JOIN graph_edges g "
    "ON g.source = json_extract(j.value, '$[0]') AND g.target = json_extract(j.value, '$[1]')"
)
# The score as the full read has it (text, 15 digits), so both give the same float32.
_SYNONYMS = (
    "SELECT g.source, g.target, CAST(g.score AS TEXT) FROM graph_synonyms g "
    "JOIN graph_entities s ON s.key = g.source JOIN graph_entities t ON t.key = g.target "
    "WHERE g.{end} IN (SELECT value FROM json_each(?))"
)


@dataclass(frozen=True, slots=True)
class CachedGraph:
    """A snapshot and what replaying the log onto it needs: the last change it covers (-1:
    the index has no log), its chunks' row ids and the keys current merge decisions name."""

    snapshot: GraphSnapshot
    seq: int
    chunk_of_rowid: dict[int, str]
    merged: frozenset[str]


def current_graph(
    db: sqlite3.Connection,
    cached: CachedGraph | None,
    read_rows: Callable[[sqlite3.Connection], SnapshotRows],
) -> CachedGraph:
    """The graph as of ``db``'s read snapshot (call inside it): ``cached`` itself, patched,
    or read whole with ``read_rows``."""
    version = _version(db)
    if cached is not None and cached.snapshot.version == version:
        return cached
    if cached is not None:
        try:
            replayed = _replayed(db, cached, version)
        except PatchRefused:
            replayed = None
        if replayed is not None:
            return replayed
    return _read_whole(db, read_rows)


def _read_whole(
    db: sqlite3.Connection, read_rows: Callable[[sqlite3.Connection], SnapshotRows]
) -> CachedGraph:
    seq = _last_seq(db)
    rows = read_rows(db)
    rowids = dict(zip(rows.chunk_rowids.tolist(), rows.chunk_ids, strict=True))
    merged = frozenset(key for pair in rows.merges for key in pair)
    return CachedGraph(assemble(rows), seq, rowids, merged)


def _replayed(db: sqlite3.Connection, cached: CachedGraph, version: str) -> CachedGraph | None:
    """``cached`` with the logged changes applied; None when reading everything is due."""
    if cached.seq < 0:
        return None  # an index without the log, opened read-only
    first, last = db.execute("SELECT min(seq), max(seq) FROM graph_changes").fetchone()
    if (first is None and cached.seq) or (first is not None and first > cached.seq + 1):
        return None  # pruned past the cached snapshot
    if last is not None and last < cached.seq:
        return None  # another database (restored from a copy)
    log = db.execute(
        "SELECT seq, chunk_rowid, key FROM graph_changes WHERE seq > ? ORDER BY seq LIMIT ?",
        (cached.seq, GRAPH_CHANGES_KEPT + 1),
    ).fetchall()
    if len(log) > GRAPH_CHANGES_KEPT or any(r[1] is None and r[2] is None for r in log):
        return None  # too much to replay, or a merge decision
    rowids = sorted({r[1] for r in log if r[1] is not None})
    if len(rowids) > max(1000, cached.snapshot.chunk_count // 2):
        return None
    keys = {r[2] for r in log if r[2] is not None}
    listed = json.dumps(rowids)
    current = dict(
        db.execute(
            "SELECT rowid, id FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
            (listed,),
        ).fetchall()
    )
    incidence = [(current[r], key, int(n)) for r, key, n in db.execute(_INCIDENCE, (listed,))]
    removed = [cached.chunk_of_rowid[r] for r in rowids if r in cached.chunk_of_rowid]
    changes = FactChanges({*removed, *current.values()}, incidence, keys)
    plan = plan_patch(cached.snapshot, changes, cached.merged)
    listed_keys = json.dumps(plan.keys)
    names = dict(db.execute(_NAMES, (listed_keys,)).fetchall())
    edges = db.execute(_EDGES, (json.dumps(plan.pairs),)).fetchall()
    synonyms = [
        (a, b, float(score))
        for end in ("source", "target")
        for a, b, score in db.execute(_SYNONYMS.format(end=end), (listed_keys,))
    ]
    snapshot = apply_patch(
        cached.snapshot, changes, plan, version=version, names=names, edges=edges,
        synonyms=_distinct(synonyms),
    )  # fmt: skip
    chunk_of_rowid = dict(cached.chunk_of_rowid)
    for rowid in rowids:
        chunk_of_rowid.pop(rowid, None)
    with_mentions = {chunk_id for chunk_id, _, _ in incidence}
    chunk_of_rowid.update((r, c) for r, c in current.items() if c in with_mentions)
    return CachedGraph(snapshot, int(log[-1][0]) if log else cached.seq, chunk_of_rowid,
                       cached.merged)  # fmt: skip


def _distinct(rows: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """A link with both ends touched is found from each end: once is enough."""
    return list(dict.fromkeys(rows))


def _version(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    return str(row[0]) if row else "0"


def _last_seq(db: sqlite3.Connection) -> int:
    """The last change logged; -1 when the index has no log (made before it, and opened
    read-only, so it was not added)."""
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'graph_changes'"
    ).fetchone()
    if found is None:
        return -1
    return int(db.execute("SELECT coalesce(max(seq), 0) FROM graph_changes").fetchone()[0])
