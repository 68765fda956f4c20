"""Sync checkpoints (`ports.SourceCheckpoints`) in two tables of the collection's schema:
``source_checkpoints`` (a source's cursor and last run) and ``source_items`` (each item's
committed version). Both are made on the first write, under the schema lock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.ports import Checkpoint, ItemRecord
from ragwright.stores.checkpoints import checkpoint_from
from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.database import SchemaDatabase

if TYPE_CHECKING:
    from psycopg import Connection

_DDL = (
    "CREATE TABLE IF NOT EXISTS {s}.source_checkpoints ("
    " source text PRIMARY KEY, cursor text, last_run double precision);"
    "CREATE TABLE IF NOT EXISTS {s}.source_items ("
    " source text NOT NULL, key text NOT NULL, version text NOT NULL,"
    " document_source text NOT NULL, state text NOT NULL DEFAULT '',"
    " synced_at double precision NOT NULL, PRIMARY KEY (source, key))"
)


class PostgresCheckpoints:
    """The connectors' checkpoints: what each source's last sync saw."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db

    def checkpoint(self, source: str) -> Checkpoint:
        def work(conn: Connection[Any]) -> Checkpoint:
            if not _exists(self._db, conn):
                return Checkpoint()
            sql = self._db.sql
            head = conn.execute(
                sql("SELECT cursor, last_run FROM {s}.source_checkpoints WHERE source = %s"),
                (source,),
            ).fetchone()
            rows = conn.execute(
                sql("SELECT key, version, document_source, state, synced_at "
                    "FROM {s}.source_items WHERE source = %s"),
                (source,),
            ).fetchall()  # fmt: skip
            return checkpoint_from(head, rows)

        return self._db.run(work, "reading a sync checkpoint")

    def record_items(
        self, source: str, items: Sequence[tuple[str, ItemRecord]], removed: Sequence[str]
    ) -> None:
        if not items and not removed:
            return

        def work(conn: Connection[Any]) -> None:
            self._ensure(conn)
            sql = self._db.sql
            with conn.cursor() as cursor:
                cursor.executemany(
                    sql("INSERT INTO {s}.source_items VALUES (%s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT (source, key) DO UPDATE SET version = excluded.version, "
                        "document_source = excluded.document_source, state = excluded.state, "
                        "synced_at = excluded.synced_at"),
                    [(source, k, r.version, r.document_source, r.state, r.synced_at)
                     for k, r in items],
                )  # fmt: skip
            conn.execute(
                sql("DELETE FROM {s}.source_items WHERE source = %s AND key = ANY(%s)"),
                (source, list(removed)),
            )

        self._db.run(work, "recording a sync checkpoint")

    def set_cursor(self, source: str, cursor: str | None, last_run: float) -> None:
        def work(conn: Connection[Any]) -> None:
            self._ensure(conn)
            conn.execute(
                self._db.sql("INSERT INTO {s}.source_checkpoints VALUES (%s, %s, %s) "
                             "ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, "
                             "last_run = excluded.last_run"),
                (source, cursor, last_run),
            )  # fmt: skip

        self._db.run(work, "recording a sync checkpoint")

    def drop_checkpoint(self, source: str) -> int:
        def work(conn: Connection[Any]) -> int:
            if not _exists(self._db, conn):
                return 0
            sql = self._db.sql
            conn.execute(sql("DELETE FROM {s}.source_checkpoints WHERE source = %s"), (source,))
            cursor = conn.execute(sql("DELETE FROM {s}.source_items WHERE source = %s"), (source,))
            return cursor.rowcount

        return self._db.run(work, "dropping a sync checkpoint")

    def claimed_by_others(self, source: str, document_sources: Sequence[str]) -> dict[str, str]:
        if not document_sources:
            return {}

        def work(conn: Connection[Any]) -> dict[str, str]:
            if not _exists(self._db, conn):
                return {}
            rows = conn.execute(
                self._db.sql(
                    "SELECT document_source, min(source) FROM {s}.source_items WHERE "
                    "source <> %s AND document_source = ANY(%s) GROUP BY document_source"
                ),
                (source, list(document_sources)),
            ).fetchall()
            return {row[0]: row[1] for row in rows}

        return self._db.run(work, "reading the other sources' items")

    def _ensure(self, conn: Connection[Any]) -> None:
        if not _exists(self._db, conn):
            lock_schema(conn, self._db.schema)
            conn.execute(self._db.sql(_DDL))


def _exists(db: SchemaDatabase, conn: Connection[Any]) -> bool:
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.source_items",)).fetchone()
    return found is not None and found[0] is not None
