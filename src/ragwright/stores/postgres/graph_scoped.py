"""A caller's view of the PostgreSQL store's graph: the whole graph's statements
(`graph_reads`) run over the evidence of the documents it may read only, so graph search
ranks for it as on a collection of those documents alone; synonym links are made afresh over
its entities (`scoped_synonyms`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

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
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.graph_reads import _DECISIONS, _EDGES, _ENTITIES, _INCIDENCE

if TYPE_CHECKING:
    from psycopg import Connection

#: The evidence of the documents a caller reads, named as the whole graph's statements name
#: the tables (``{v}``: the condition on documents ``d``).
_SCOPE = (
    "WITH vm AS MATERIALIZED (SELECT * FROM {s}.graph_mentions WHERE document_id IN "
    "  (SELECT d.id FROM {s}.documents d WHERE {v})), "
    "vr AS MATERIALIZED (SELECT * FROM {s}.graph_relations WHERE document_id IN "
    "  (SELECT d.id FROM {s}.documents d WHERE {v})) "
)
_CHUNKS = "SELECT DISTINCT chunk_id FROM {s}.graph_mentions ORDER BY chunk_id"


class PostgresScopedGraph:
    """The graph a caller's permissions let it walk."""

    def __init__(self, db: SchemaDatabase, filters: FilterCompiler) -> None:
        self._db = db
        self._filters = filters

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        """The graph of the evidence in the chunks ``readable`` (a caller's permissions)
        keeps: what graph search walks for that caller."""

        def work(conn: Connection[Any]) -> SnapshotRows:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return self._readable_rows(conn, readable)

        return assemble(self._db.run(work, "reading the graph"))

    def _readable_rows(self, conn: Connection[Any], readable: Filter) -> SnapshotRows:
        condition, params = self._filters.compile_readable_documents(readable)
        scope = sql.SQL(_SCOPE).format(s=self._db.identifier, v=condition)

        def scoped(statement: str) -> list[Any]:
            """``statement`` (one of the whole graph's) over the caller's evidence."""
            body = statement.replace("{s}.graph_mentions", "vm")
            body = body.replace("{s}.graph_relations", "vr")
            body = ", " + body[len("WITH ") :] if body.startswith("WITH ") else " " + body
            composed = sql.Composed([scope, sql.SQL(body).format(s=self._db.identifier)])
            return conn.execute(composed, [*params, *params]).fetchall()

        version = self._db.setting(conn, "graph_version") or "0"
        entities = scoped(_ENTITIES)
        keys = [str(e[0]) for e in entities]
        chunks = [str(r[0]) for r in scoped(_CHUNKS)]
        decisions = conn.execute(self._db.sql(_DECISIONS)).fetchall()
        entity_ids = np.arange(len(entities), dtype=np.int64)  # numbered by key, as in SQL
        return SnapshotRows(
            version=scoped_version(version, readable),
            entity_ids=entity_ids,
            entity_keys=keys,
            entity_names=[str(e[1]) for e in entities],
            entity_mentions=np.array([e[2] for e in entities], dtype=np.int64),
            chunk_rowids=np.arange(len(chunks), dtype=np.int64),
            chunk_ids=chunks,
            incidence=int_triples(scoped(_INCIDENCE)[0][0]),
            edges=int_triples(scoped(_EDGES)[0][0]),
            synonyms=scoped_synonyms(keys, entity_ids, decisions),
            merges=current_merges(decisions),
        )
