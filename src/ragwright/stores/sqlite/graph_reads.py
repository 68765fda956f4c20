"""Reading the SQLite store's graph: its version, the snapshot graph search runs on (built in
bulk, then kept current from the change log: `graph_refresh`), counts, and one entity with
its provenance."""

from __future__ import annotations

import sqlite3
import threading

import numpy as np

from ragwright.graph.keys import entity_key
from ragwright.models.graph import COOCCURRENCE_LABELS, GraphSnapshot, TypedFact
from ragwright.models.graph_records import (
    EDGE_WEIGHT_CAP,
    WEIGHT_UNITS,
    EntityInfo,
    EntityLink,
    GraphStats,
    MentionSite,
)
from ragwright.stores.graph_snapshot import (
    SnapshotRows,
    current_merges,
    float_triples,
    int_triples,
)
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.graph_refresh import CachedGraph, current_graph
from ragwright.stores.sqlite.graph_schema import relation_ends

_NAME = (
    "(SELECT f.form FROM graph_entity_forms f WHERE f.key = {e}.key GROUP BY f.form "
    "ORDER BY sum(f.mentions) DESC, f.form LIMIT 1)"
)
_LABEL = (
    "(SELECT f.label FROM graph_entity_forms f WHERE f.key = {e}.key GROUP BY f.label "
    "ORDER BY sum(f.mentions) DESC, f.label LIMIT 1)"
)
_INCIDENCE = (
    "SELECT group_concat(x) FROM (SELECT m.chunk_rowid || ',' || e.id || ',' || count(*) AS x "
    "FROM graph_mentions m JOIN graph_entities e ON e.key = m.key "
    "GROUP BY m.chunk_rowid, m.key)"
)
_EDGES = (
    "SELECT group_concat(s.id || ',' || t.id || ',' || g.weight) FROM graph_edges g "
    "JOIN graph_entities s ON s.key = g.source JOIN graph_entities t ON t.key = g.target"
)
_SYNONYMS = (
    "SELECT group_concat(s.id || ',' || t.id || ',' || g.score) FROM graph_synonyms g "
    "JOIN graph_entities s ON s.key = g.source JOIN graph_entities t ON t.key = g.target"
)
_MENTIONED_CHUNKS = (
    "SELECT c.rowid, c.id FROM chunks c WHERE c.rowid IN "
    "(SELECT DISTINCT chunk_rowid FROM graph_mentions) ORDER BY c.id"
)


class SQLiteGraphReads:
    """Reads of the whole graph, its snapshot cached by graph version (one per store)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._graph_lock = threading.Lock()
        self._graph_cache: CachedGraph | None = None

    def typed_facts(self) -> list[TypedFact]:
        labels = sorted(COOCCURRENCE_LABELS)
        rows = self._db.query(
            f"SELECT DISTINCT {relation_ends(self._db, 'r')}, r.label FROM graph_relations r "
            "WHERE r.label NOT IN (?, ?) ORDER BY 1, 3, 2",
            labels,
        )
        return [TypedFact(source, label, target) for source, target, label in rows]

    def graph_version(self) -> str:
        rows = self._db.query("SELECT value FROM meta WHERE key = 'graph_version'")
        return str(rows[0][0]) if rows else "0"

    def graph_snapshot(self) -> GraphSnapshot:
        """The graph at its current version: read in bulk the first time (a few statements,
        arrays parsed by numpy), then kept and brought up to date by replaying the change log
        (`graph_refresh`)."""
        with self._graph_lock:
            cached = self._graph_cache
            if cached is not None and cached.snapshot.version == self.graph_version():
                return cached.snapshot
            with self._db.lock, self._db.read_snapshot():
                cached = current_graph(self._db.connection, cached, snapshot_rows)
            self._graph_cache = cached
            return cached.snapshot

    def graph_stats(self) -> GraphStats:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection

            def count(sql: str) -> int:
                return int(db.execute(sql).fetchone()[0])

            extracted = dict(
                db.execute(
                    "SELECT extractor, count(*) FROM graph_extractions GROUP BY extractor"
                ).fetchall()
            )
            decisions = db.execute(
                "SELECT source, target, decision FROM graph_decisions ORDER BY id"
            ).fetchall()
            return GraphStats(
                version=self.graph_version(),
                extracted=extracted,
                chunks_total=count("SELECT count(*) FROM chunks"),
                mentions=count("SELECT count(*) FROM graph_mentions"),
                relations=count("SELECT count(*) FROM graph_relations"),
                entities=count("SELECT count(*) FROM graph_entities"),
                edges=count("SELECT count(*) FROM graph_edges"),
                synonym_links=count("SELECT count(*) FROM graph_synonyms"),
                merges=len(current_merges(decisions)),
            )

    def describe_entity(self, name: str, max_sites: int = 50) -> EntityInfo | None:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            key = stored_key(db, name)
            if key is None:
                return None
            row = db.execute(
                f"SELECT e.key, {_NAME.format(e='e')}, {_LABEL.format(e='e')}, e.mentions "
                "FROM graph_entities e WHERE e.key = ?",
                (key,),
            ).fetchone()
            aliases = db.execute(
                "SELECT form, sum(mentions) AS n FROM graph_entity_forms WHERE key = ? "
                "GROUP BY form ORDER BY n DESC, form",
                (key,),
            ).fetchall()
            synonyms = db.execute(
                f"SELECT e.key, {_NAME.format(e='e')}, s.score FROM graph_synonyms s "
                "JOIN graph_entities e ON e.key = CASE WHEN s.source = ? THEN s.target "
                "ELSE s.source END WHERE s.source = ? OR s.target = ? "
                "ORDER BY s.score DESC, e.key",
                (key, key, key),
            ).fetchall()
            neighbours = db.execute(
                f"SELECT e.key, {_NAME.format(e='e')}, g.weight FROM graph_edges g "
                "JOIN graph_entities e ON e.key = CASE WHEN g.source = ? THEN g.target "
                "ELSE g.source END WHERE g.source = ? OR g.target = ? "
                "ORDER BY g.weight DESC, e.key",
                (key, key, key),
            ).fetchall()
            decisions = db.execute(
                "SELECT source, target, decision FROM graph_decisions "
                "WHERE source = ? OR target = ? ORDER BY id",
                (key, key),
            ).fetchall()
            merged = []
            for source, target in current_merges(decisions):
                other = target if source == key else source
                found = db.execute(
                    f"SELECT e.key, {_NAME.format(e='e')} FROM graph_entities e WHERE e.key = ?",
                    (other,),
                ).fetchone()
                if found is not None:
                    merged.append(EntityLink(found[0], found[1], 1.0))
            sites = db.execute(
                "SELECT c.id, c.document_id, d.source, c.idx, m.char_start, m.char_end, "
                "c.char_start, m.text, m.extractor FROM graph_mentions m "
                "JOIN chunks c ON c.rowid = m.chunk_rowid JOIN documents d ON d.id = c.document_id "
                "WHERE m.key = ? ORDER BY d.source, c.idx, m.char_start LIMIT ?",
                (key, max(0, max_sites)),
            ).fetchall()
        return EntityInfo(
            key=row[0],
            name=row[1],
            label=row[2],
            mentions=int(row[3]),
            aliases=tuple((form, int(n)) for form, n in aliases),
            synonyms=tuple(EntityLink(k, n, float(score)) for k, n, score in synonyms),
            merged=tuple(merged),
            neighbours=tuple(
                EntityLink(k, n, min(EDGE_WEIGHT_CAP, w / WEIGHT_UNITS)) for k, n, w in neighbours
            ),
            sites=tuple(
                MentionSite(cid, did, src, idx, start, end, base + start, base + end, text, ext)
                for cid, did, src, idx, start, end, base, text, ext in sites
            ),
        )


def snapshot_rows(db: sqlite3.Connection) -> SnapshotRows:
    """Every fact of the graph, in bulk (call inside a read snapshot)."""
    version = db.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    entities = db.execute(
        f"SELECT e.id, e.key, {_NAME.format(e='e')}, e.mentions FROM graph_entities e "
        "ORDER BY e.key"
    ).fetchall()
    chunks = db.execute(_MENTIONED_CHUNKS).fetchall()
    incidence = int_triples(db.execute(_INCIDENCE).fetchone()[0])
    edges = int_triples(db.execute(_EDGES).fetchone()[0])
    synonyms = float_triples(db.execute(_SYNONYMS).fetchone()[0])
    decisions = db.execute(
        "SELECT source, target, decision FROM graph_decisions ORDER BY id"
    ).fetchall()
    return SnapshotRows(
        version=str(version[0]) if version else "0",
        entity_ids=np.array([e[0] for e in entities], dtype=np.int64),
        entity_keys=[e[1] for e in entities],
        entity_names=[e[2] for e in entities],
        entity_mentions=np.array([e[3] for e in entities], dtype=np.int64),
        chunk_rowids=np.array([c[0] for c in chunks], dtype=np.int64),
        chunk_ids=[c[1] for c in chunks],
        incidence=incidence,
        edges=edges,
        synonyms=synonyms,
        merges=current_merges(decisions),
    )


def stored_key(db: sqlite3.Connection, name: str) -> str | None:
    """The stored key ``name`` names: its normalized key, else the text as given (a key
    copied from a listing)."""
    for candidate in dict.fromkeys((entity_key(name), name)):
        if db.execute("SELECT 1 FROM graph_entities WHERE key = ?", (candidate,)).fetchone():
            return candidate
    return None
