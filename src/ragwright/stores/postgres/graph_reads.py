"""Reading the PostgreSQL store's graph: entities and edges grouped from the evidence in one
repeatable-read transaction, dense indices numbered in SQL and the incidence read as one
string numpy parses (no Python object per mention); then kept current from the change log
(`graph_refresh`)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

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
from ragwright.stores.graph_facts import stated_ends
from ragwright.stores.graph_snapshot import (
    SnapshotRows,
    current_merges,
    float_triples,
    int_triples,
)
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_refresh import CachedGraph, current_graph

if TYPE_CHECKING:
    from psycopg import Connection

_ENTITIES = (
    "SELECT key, mode() WITHIN GROUP (ORDER BY text), count(*) FROM {s}.graph_mentions "
    "GROUP BY key ORDER BY key"
)
_NUMBERED = (
    "WITH e AS (SELECT key, row_number() OVER (ORDER BY key) - 1 AS i "
    "           FROM (SELECT DISTINCT key FROM {s}.graph_mentions) k), "
    "c AS (SELECT chunk_id, row_number() OVER (ORDER BY chunk_id) - 1 AS i "
    "      FROM (SELECT DISTINCT chunk_id FROM {s}.graph_mentions) k) "
)
_INCIDENCE = _NUMBERED + (
    "SELECT string_agg(c.i || ',' || e.i || ',' || x.n, ',') FROM "
    "(SELECT chunk_id, key, count(*) AS n FROM {s}.graph_mentions GROUP BY chunk_id, key) x "
    "JOIN e ON e.key = x.key JOIN c ON c.chunk_id = x.chunk_id"
)
_EDGES = _NUMBERED + (
    "SELECT string_agg(a.i || ',' || b.i || ',' || x.w, ',') FROM "
    "(SELECT source, target, sum(weight) AS w FROM {s}.graph_relations "
    " GROUP BY source, target) x JOIN e a ON a.key = x.source JOIN e b ON b.key = x.target"
)
_SYNONYMS = _NUMBERED + (
    "SELECT string_agg(a.i || ',' || b.i || ',' || x.score, ',') FROM {s}.graph_synonyms x "
    "JOIN e a ON a.key = x.source JOIN e b ON b.key = x.target"
)
_DECISIONS = "SELECT source, target, decision FROM {s}.graph_decisions ORDER BY id"
_NAME = "(SELECT mode() WITHIN GROUP (ORDER BY m.text) FROM {s}.graph_mentions m WHERE m.key = {k})"


class PostgresGraphReads:
    """Reads of the whole graph, its snapshot cached by graph version (one per store)."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db
        self._graph_lock = threading.Lock()
        self._graph_cache: CachedGraph | None = None

    def typed_facts(self) -> list[TypedFact]:
        labels = sorted(COOCCURRENCE_LABELS)
        rows = self._db.query(
            "SELECT DISTINCT " + stated_ends("r") + ", r.label FROM {s}.graph_relations r "
            "WHERE r.label NOT IN (%s, %s) ORDER BY 1, 3, 2",
            labels,
        )
        return [TypedFact(source, label, target) for source, target, label in rows]

    def graph_version(self) -> str:
        return self._db.run(lambda conn: _version(self._db, conn), "reading the graph version")

    def graph_snapshot(self) -> GraphSnapshot:
        """The graph at its current version: read whole the first time, then kept and
        brought up to date from the change log (`graph_refresh`)."""
        with self._graph_lock:
            cached = self._graph_cache
            if cached is not None and cached.snapshot.version == self.graph_version():
                return cached.snapshot

            def work(conn: Connection[Any]) -> CachedGraph:
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                version = _version(self._db, conn)
                return current_graph(self._db, conn, version, cached, self._snapshot_rows)

            self._graph_cache = self._db.run(work, "reading the graph")
            return self._graph_cache.snapshot

    def _snapshot_rows(self, conn: Connection[Any]) -> SnapshotRows:
        """Every fact of the graph (inside a repeatable-read transaction)."""
        sql = self._db.sql
        version = _version(self._db, conn)
        entities = conn.execute(sql(_ENTITIES)).fetchall()
        chunks = [
            r[0]
            for r in conn.execute(
                sql("SELECT DISTINCT chunk_id FROM {s}.graph_mentions ORDER BY chunk_id")
            )
        ]

        def one(statement: str) -> str | None:
            row = conn.execute(sql(statement)).fetchone()
            return row[0] if row else None

        count = len(entities)
        return SnapshotRows(
            version=version,
            entity_ids=np.arange(count, dtype=np.int64),
            entity_keys=[e[0] for e in entities],
            entity_names=[e[1] for e in entities],
            entity_mentions=np.array([e[2] for e in entities], dtype=np.int64),
            chunk_rowids=np.arange(len(chunks), dtype=np.int64),
            chunk_ids=chunks,
            incidence=int_triples(one(_INCIDENCE)),
            edges=int_triples(one(_EDGES)),
            synonyms=float_triples(one(_SYNONYMS)),
            merges=current_merges(conn.execute(sql(_DECISIONS)).fetchall()),
        )

    def graph_stats(self) -> GraphStats:
        def work(conn: Connection[Any]) -> GraphStats:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            sql = self._db.sql

            def count(statement: str) -> int:
                row = conn.execute(sql(statement)).fetchone()
                return int(row[0]) if row else 0

            extracted = {
                str(r[0]): int(r[1])
                for r in conn.execute(
                    sql("SELECT extractor, count(*) FROM {s}.graph_extractions GROUP BY extractor")
                )
            }
            return GraphStats(
                version=_version(self._db, conn),
                extracted=extracted,
                chunks_total=count("SELECT count(*) FROM {s}.chunks"),
                mentions=count("SELECT count(*) FROM {s}.graph_mentions"),
                relations=count("SELECT count(*) FROM {s}.graph_relations"),
                entities=count("SELECT count(DISTINCT key) FROM {s}.graph_mentions"),
                edges=count(
                    "SELECT count(*) FROM (SELECT DISTINCT source, target "
                    "FROM {s}.graph_relations) x"
                ),
                synonym_links=count(
                    "SELECT count(*) FROM {s}.graph_synonyms x WHERE "
                    "EXISTS (SELECT 1 FROM {s}.graph_mentions m WHERE m.key = x.source) AND "
                    "EXISTS (SELECT 1 FROM {s}.graph_mentions m WHERE m.key = x.target)"
                ),
                merges=len(current_merges(conn.execute(sql(_DECISIONS)).fetchall())),
            )

        return self._db.run(work, "reading the graph")

    def describe_entity(self, name: str, max_sites: int = 50) -> EntityInfo | None:
        return self._db.run(lambda conn: self._describe(conn, name, max_sites), "reading the graph")

    def _describe(self, conn: Connection[Any], name: str, max_sites: int) -> EntityInfo | None:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        sql = self._db.sql
        key = stored_key(self._db, conn, name)
        if key is None:
            return None
        row = conn.execute(
            sql("SELECT mode() WITHIN GROUP (ORDER BY text), "
                "mode() WITHIN GROUP (ORDER BY label), count(*) "
                "FROM {s}.graph_mentions WHERE key = %s"),
            (key,),
        ).fetchone()  # fmt: skip
        assert row is not None
        aliases = conn.execute(
            sql("SELECT text, count(*) AS n FROM {s}.graph_mentions WHERE key = %s "
                "GROUP BY text ORDER BY n DESC, text"),
            (key,),
        ).fetchall()  # fmt: skip
        other = "CASE WHEN x.source = %s THEN x.target ELSE x.source END"
        synonyms = conn.execute(
            sql(f"SELECT o.key, {_NAME.format(s='{s}', k='o.key')}, o.score FROM "
                f"(SELECT {other} AS key, x.score FROM {{s}}.graph_synonyms x "
                " WHERE x.source = %s OR x.target = %s) o "
                "WHERE EXISTS (SELECT 1 FROM {s}.graph_mentions m WHERE m.key = o.key) "
                "ORDER BY o.score DESC, o.key"),
            (key, key, key),
        ).fetchall()  # fmt: skip
        neighbours = conn.execute(
            sql(f"SELECT o.key, {_NAME.format(s='{s}', k='o.key')}, o.w FROM "
                f"(SELECT {other} AS key, sum(x.weight) AS w FROM {{s}}.graph_relations x "
                " WHERE x.source = %s OR x.target = %s GROUP BY 1) o "
                "ORDER BY o.w DESC, o.key"),
            (key, key, key),
        ).fetchall()  # fmt: skip
        decisions = conn.execute(
            sql("SELECT source, target, decision FROM {s}.graph_decisions "
                "WHERE source = %s OR target = %s ORDER BY id"),
            (key, key),
        ).fetchall()  # fmt: skip
        merged = []
        for source, target in current_merges(decisions):
            partner = target if source == key else source
            found = conn.execute(
                sql(f"SELECT {_NAME.format(s='{s}', k='%s')}"), (partner,)
            ).fetchone()
            if found is not None and found[0] is not None:
                merged.append(EntityLink(partner, found[0], 1.0))
        sites = conn.execute(
            sql("SELECT c.id, c.document_id, d.source, c.idx, m.char_start, m.char_end, "
                "c.char_start, m.text, m.extractor FROM {s}.graph_mentions m "
                "JOIN {s}.chunks c ON c.id = m.chunk_id "
                "JOIN {s}.documents d ON d.id = c.document_id "
                "WHERE m.key = %s ORDER BY d.source, c.idx, m.char_start LIMIT %s"),
            (key, max(0, max_sites)),
        ).fetchall()  # fmt: skip
        return EntityInfo(
            key=key,
            name=row[0],
            label=row[1],
            mentions=int(row[2]),
            aliases=tuple((form, int(n)) for form, n in aliases),
            synonyms=tuple(EntityLink(k, n, float(score)) for k, n, score in synonyms),
            merged=tuple(merged),
            neighbours=tuple(
                EntityLink(k, n, min(EDGE_WEIGHT_CAP, int(w) / WEIGHT_UNITS))
                for k, n, w in neighbours
            ),
            sites=tuple(
                MentionSite(cid, did, src, idx, start, end, base + start, base + end, text, ext)
                for cid, did, src, idx, start, end, base, text, ext in sites
            ),
        )


def stored_key(db: SchemaDatabase, conn: Connection[Any], name: str) -> str | None:
    """The key ``name`` names: its normalized key, else the text as given."""
    for candidate in dict.fromkeys((entity_key(name), name)):
        found = conn.execute(
            db.sql("SELECT 1 FROM {s}.graph_mentions WHERE key = %s LIMIT 1"), (candidate,)
        ).fetchone()
        if found is not None:
            return candidate
    return None


def _version(db: SchemaDatabase, conn: Connection[Any]) -> str:
    return db.setting(conn, "graph_version") or "0"
