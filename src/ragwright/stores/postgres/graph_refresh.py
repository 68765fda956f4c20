"""The PostgreSQL store's cached graph snapshot, kept current by replaying ``graph_changes``
(`graph_schema.GRAPH_CHANGES_DDL`): the changes stamped with the versions after the cached
one, the changed chunks' mentions, the touched entities' names and synonym links and the
touched pairs' relations, each through an index, patched onto the cached arrays
(`graph_patch`). The whole graph is read for the first snapshot, after a merge decision, when
the log no longer reaches back to the cached version, or when more changed than a replay is
worth. Call inside one repeatable-read transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragwright.models.graph import GraphSnapshot
from ragwright.stores.graph_patch import FactChanges, PatchRefused, apply_patch, plan_patch
from ragwright.stores.graph_snapshot import SnapshotRows, assemble
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_schema import GRAPH_CHANGES_KEPT

if TYPE_CHECKING:
    from psycopg import Connection

_LOG = "SELECT chunk_id, key FROM {s}.graph_changes WHERE version > %s AND version <= %s LIMIT %s"
_INCIDENCE = (
    "SELECT chunk_id, key, count(*) FROM {s}.graph_mentions WHERE chunk_id = ANY(%s) "
    "GROUP BY chunk_id, key"
)
_NAMES = (
    "SELECT key, mode() WITHIN GROUP (ORDER BY text) FROM {s}.graph_mentions "
    "WHERE key = ANY(%s) GROUP BY key"
)
_EDGES = (
    "SELECT r.source, r.target, sum(r.weight)::bigint FROM {s}.graph_relations r "
    "JOIN unnest(%s::text[], %s::text[]) AS p(source, target) "
    "ON r.source = p.source AND r.target = p.target GROUP BY r.source, r.target"
)
_SYNONYMS = (
    "SELECT x.source, x.target, x.score FROM {s}.graph_synonyms x "
    "WHERE (x.source = ANY(%s) OR x.target = ANY(%s)) "
    "AND EXISTS (SELECT 1 FROM {s}.graph_mentions m WHERE m.key = x.source) "
    "AND EXISTS (SELECT 1 FROM {s}.graph_mentions m WHERE m.key = x.target)"
)


@dataclass(frozen=True, slots=True)
class CachedGraph:
    """A snapshot (its version is the log's position) and the keys merges name."""

    snapshot: GraphSnapshot
    merged: frozenset[str]


def current_graph(
    db: SchemaDatabase,
    conn: Connection[Any],
    version: str,
    cached: CachedGraph | None,
    read_rows: Callable[[Connection[Any]], SnapshotRows],
) -> CachedGraph:
    """The graph at ``version`` (read in ``conn``'s transaction): ``cached`` patched, or
    read whole with ``read_rows``."""
    if cached is not None and cached.snapshot.version == version:
        return cached
    if cached is not None:
        try:
            replayed = _replayed(db, conn, cached, version)
        except PatchRefused:
            replayed = None
        if replayed is not None:
            return replayed
    rows = read_rows(conn)
    return CachedGraph(assemble(rows), frozenset(key for pair in rows.merges for key in pair))


def _replayed(
    db: SchemaDatabase, conn: Connection[Any], cached: CachedGraph, version: str
) -> CachedGraph | None:
    since, until = int(cached.snapshot.version), int(version)
    if until < since or until - since > GRAPH_CHANGES_KEPT:
        return None  # another database, or pruned past the cached version
    sql = db.sql
    log = conn.execute(sql(_LOG), (since, until, GRAPH_CHANGES_KEPT + 1)).fetchall()
    if len(log) > GRAPH_CHANGES_KEPT or any(c is None and k is None for c, k in log):
        return None  # too much to replay, or a merge decision
    chunks = sorted({c for c, _ in log if c is not None})
    if len(chunks) > max(1000, cached.snapshot.chunk_count // 2):
        return None
    incidence = [(str(c), str(k), int(n)) for c, k, n in conn.execute(sql(_INCIDENCE), (chunks,))]
    changes = FactChanges(chunks, incidence, {str(k) for _, k in log if k is not None})
    plan = plan_patch(cached.snapshot, changes, cached.merged)
    names = {str(k): str(n) for k, n in conn.execute(sql(_NAMES), (plan.keys,))}
    sources, targets = [a for a, _ in plan.pairs], [b for _, b in plan.pairs]
    edges = [(str(a), str(b), int(w)) for a, b, w in conn.execute(sql(_EDGES), (sources, targets))]
    synonyms = [
        (str(a), str(b), float(score))
        for a, b, score in conn.execute(sql(_SYNONYMS), (plan.keys, plan.keys))
    ]
    snapshot = apply_patch(
        cached.snapshot, changes, plan, version=version, names=names, edges=edges,
        synonyms=synonyms,
    )  # fmt: skip
    return CachedGraph(snapshot, cached.merged)
