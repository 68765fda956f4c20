"""Graph facts in the PostgreSQL store: copied in with their chunks (`copy_facts`, inside the
document write's transaction) or later for stored chunks (`graph build`); a chunk's delete
cascades to its facts. Every transaction that changes a fact bumps the graph version, last
(the settings row is then held only while committing)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts
from ragwright.models.graph_records import FactsWritten
from ragwright.stores.graph_facts import FactRows, fact_rows, facts_from_rows, stated_ends
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_schema import (
    BUMP_GRAPH_VERSION,
    GRAPH_CHANGES_KEPT,
    PRUNE_GRAPH_CHANGES,
)
from ragwright.stores.postgres.row_writes import copy_rows
from ragwright.stores.postgres.rows import CHUNK_COLUMNS
from ragwright.stores.rows import chunk_from_row

if TYPE_CHECKING:
    from psycopg import Connection

#: Versions between two prunings of the change log.
PRUNE_EVERY = 64

Copy = Callable[
    ["Connection[Any]", str, tuple[tuple[str, str], ...], list[tuple[object, ...]]], None
]

_EXTRACTION_COPY = (("chunk_id", "text"), ("document_id", "text"), ("extractor", "text"))
_MENTION_COPY = (
    ("chunk_id", "text"), ("document_id", "text"), ("extractor", "text"),
    ("char_start", "int4"), ("char_end", "int4"), ("text", "text"), ("key", "text"),
    ("label", "text"),
)  # fmt: skip
_RELATION_COPY = (
    ("chunk_id", "text"), ("document_id", "text"), ("extractor", "text"), ("source", "text"),
    ("target", "text"), ("label", "text"), ("weight", "int8"), ("reversed", "int2"),
)  # fmt: skip


def copy_facts(
    conn: Connection[Any], copy: Copy, facts: Sequence[tuple[str, FactRows]]
) -> FactsWritten:
    """Copy in the evidence of chunks that hold none now: ``(document id, rows)`` each."""
    if not facts:
        return FactsWritten()
    copy(conn, "graph_extractions", _EXTRACTION_COPY,
         [(rows.chunk_id, document, rows.extractor) for document, rows in facts])  # fmt: skip
    copy(
        conn,
        "graph_mentions",
        _MENTION_COPY,
        [(r.chunk_id, d, r.extractor, *m) for d, r in facts for m in r.mentions],
    )
    copy(
        conn,
        "graph_relations",
        _RELATION_COPY,
        [(r.chunk_id, d, r.extractor, *x) for d, r in facts for x in r.relations],
    )
    return FactsWritten(
        len(facts),
        sum(len(r.mentions) for _, r in facts),
        sum(len(r.relations) for _, r in facts),
        sum(r.unresolved for _, r in facts),
    )


def had_facts(db: SchemaDatabase, conn: Connection[Any], document_ids: list[str]) -> bool:
    row = conn.execute(
        db.sql("SELECT EXISTS (SELECT 1 FROM {s}.graph_extractions WHERE document_id = ANY(%s))"),
        (document_ids,),
    ).fetchone()
    return bool(row and row[0])


def bump_graph_version(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """The next graph version (a trigger gives it to what this transaction logged); every
    so often the log's old rows are pruned."""
    row = conn.execute(db.sql(BUMP_GRAPH_VERSION + " RETURNING value::bigint")).fetchone()
    assert row is not None
    version = int(row[0])
    if version % PRUNE_EVERY == 0:
        conn.execute(db.sql(PRUNE_GRAPH_CHANGES), (version - GRAPH_CHANGES_KEPT,))


class PostgresGraphWrites:
    """Writes of the graph's facts, chunk by chunk."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db

    def chunks_without_facts(self, extractor: str, after: str | None, limit: int) -> list[Chunk]:
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM {{s}}.chunks c "
            "JOIN {s}.documents d ON d.id = c.document_id "
            "LEFT JOIN {s}.graph_extractions g ON g.chunk_id = c.id "
            "WHERE c.id > %s AND (g.extractor IS NULL OR g.extractor <> %s) "
            "ORDER BY c.id LIMIT %s",
            (after or "", extractor, max(0, limit)),
        )
        return [chunk_from_row(row) for row in rows]

    def stored_facts(self, chunk_ids: Sequence[str]) -> list[ChunkFacts]:
        if not chunk_ids:
            return []
        where = "WHERE chunk_id = ANY(%s)"
        ids = (list(chunk_ids),)
        return facts_from_rows(
            self._db.query(f"SELECT chunk_id, extractor FROM {{s}}.graph_extractions {where}", ids),
            self._db.query(
                "SELECT chunk_id, char_start, char_end, text, key, label "
                f"FROM {{s}}.graph_mentions {where}",
                ids,
            ),
            self._db.query(
                f"SELECT r.chunk_id, {stated_ends('r')}, r.label, r.weight "
                f"FROM {{s}}.graph_relations r {where}",
                ids,
            ),
        )

    def write_facts(self, facts: Sequence[ChunkFacts]) -> FactsWritten:
        if not facts:
            return FactsWritten()
        last = {item.chunk_id: item for item in facts}  # a later one replaces an earlier one

        def work(conn: Connection[Any]) -> FactsWritten:
            # KEY SHARE: a chunk found here cannot be deleted before this commits; one deleted
            # already is not found, and its facts are skipped.
            found = {
                row[0]: (row[1], row[2])
                for row in conn.execute(
                    self._db.sql(
                        "SELECT id, document_id, text FROM {s}.chunks WHERE id = ANY(%s) "
                        "ORDER BY id FOR KEY SHARE"
                    ),
                    (list(last),),
                )
            }
            rows = [(found[c][0], fact_rows(f, found[c][1])) for c, f in last.items() if c in found]
            ids = [rows.chunk_id for _, rows in rows]
            for table in ("graph_mentions", "graph_relations", "graph_extractions"):
                conn.execute(
                    self._db.sql(f"DELETE FROM {{s}}.{table} WHERE chunk_id = ANY(%s)"), (ids,)
                )
            written = copy_facts(conn, functools.partial(copy_rows, self._db), rows)
            if rows:
                bump_graph_version(self._db, conn)
            return written + FactsWritten(skipped=len(facts) - len(rows))

        return self._db.run(work, "writing graph facts")
