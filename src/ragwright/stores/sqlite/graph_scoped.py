"""A caller's view of the SQLite store's graph: the snapshot of the evidence in the chunks it
may read only, by the rules of the whole graph's (`graph_reads.snapshot_rows`), so graph
search ranks for it as on an index of those chunks alone. Counts, display names and edge
weights are summed from the evidence (the stored aggregates count every chunk), and synonym
links are made afresh over its entities (`scoped_synonyms`)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

import numpy as np

from ragwright.filters import Filter
from ragwright.models.graph import GraphSnapshot
from ragwright.stores.graph_snapshot import (
    SnapshotRows,
    assemble,
    current_merges,
    int_triples,
    scoped_synonyms,
    scoped_version,
)
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.filters import compile_filter

_FORMS = (
    "SELECT e.id, m.key, m.text, count(*) FROM graph_mentions m "
    "JOIN graph_entities e ON e.key = m.key WHERE m.chunk_rowid IN ({visible}) "
    "GROUP BY m.key, m.text"
)
_CHUNKS = (
    "SELECT c.rowid, c.id FROM chunks c WHERE c.rowid IN (SELECT DISTINCT chunk_rowid "
    "FROM graph_mentions WHERE chunk_rowid IN ({visible})) ORDER BY c.id"
)
_INCIDENCE = (
    "SELECT group_concat(x) FROM (SELECT m.chunk_rowid || ',' || e.id || ',' || count(*) AS x "
    "FROM graph_mentions m JOIN graph_entities e ON e.key = m.key "
    "WHERE m.chunk_rowid IN ({visible}) GROUP BY m.chunk_rowid, m.key)"
)
_EDGES = (
    "SELECT group_concat(s.id || ',' || t.id || ',' || g.weight) FROM "
    "(SELECT r.source, r.target, sum(r.weight) AS weight FROM graph_relations r "
    " WHERE r.chunk_rowid IN ({visible}) GROUP BY r.source, r.target) g "
    "JOIN graph_entities s ON s.key = g.source JOIN graph_entities t ON t.key = g.target"
)


class SQLiteScopedGraph:
    """The graph a caller's permissions let it walk."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        """The graph of the evidence in the chunks ``readable`` (a caller's permissions)
        keeps: what graph search walks for that caller."""
        with self._db.lock, self._db.read_snapshot():
            return assemble(readable_rows(self._db.connection, readable))


def readable_rows(db: sqlite3.Connection, readable: Filter) -> SnapshotRows:
    """The facts of the chunks ``readable`` keeps (call inside a read snapshot)."""
    condition, params = compile_filter(readable)
    visible = f"SELECT c.rowid FROM chunks c WHERE {condition}"

    def rows(statement: str) -> list[Any]:
        return db.execute(statement.format(visible=visible), params).fetchall()

    version = db.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    forms: dict[str, Counter[str]] = {}
    ids: dict[str, int] = {}
    for entity_id, key, text, count in rows(_FORMS):
        forms.setdefault(str(key), Counter())[str(text)] += int(count)
        ids[str(key)] = int(entity_id)
    keys = sorted(forms)
    entity_ids = np.array([ids[key] for key in keys], dtype=np.int64)
    chunks = rows(_CHUNKS)
    edges = int_triples(rows(_EDGES)[0][0])
    if len(edges):  # an end mentioned only where the caller may not read is no entity here
        edges = edges[np.isin(edges[:, 0], entity_ids) & np.isin(edges[:, 1], entity_ids)]
    decisions = db.execute(
        "SELECT source, target, decision FROM graph_decisions ORDER BY id"
    ).fetchall()
    return SnapshotRows(
        version=scoped_version(str(version[0]) if version else "0", readable),
        entity_ids=entity_ids,
        entity_keys=keys,
        entity_names=[_most_frequent(forms[key]) for key in keys],
        entity_mentions=np.array([sum(forms[key].values()) for key in keys], dtype=np.int64),
        chunk_rowids=np.array([c[0] for c in chunks], dtype=np.int64),
        chunk_ids=[str(c[1]) for c in chunks],
        incidence=int_triples(rows(_INCIDENCE)[0][0]),
        edges=edges,
        synonyms=scoped_synonyms(keys, entity_ids, decisions),
        merges=current_merges(decisions),
    )


def _most_frequent(forms: Counter[str]) -> str:
    """The display name the whole graph's reads choose: the most mentioned surface form, then
    the smallest (SQLite's BINARY order is code point order, as Python's)."""
    return min(forms, key=lambda form: (-forms[form], form))
