"""Sync checkpoints (`ports.SourceCheckpoints`) in two tables of the index file:
``source_checkpoints`` (a source's cursor and last run) and ``source_items`` (each item's
committed version). Both are made on the first write."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ragwright.ports import Checkpoint, ItemRecord
from ragwright.stores.checkpoints import checkpoint_from
from ragwright.stores.sqlite.database import Database

_DDL = (
    "CREATE TABLE IF NOT EXISTS source_checkpoints ("
    " source TEXT PRIMARY KEY, cursor TEXT, last_run REAL)",
    "CREATE TABLE IF NOT EXISTS source_items ("
    " source TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL,"
    " document_source TEXT NOT NULL, state TEXT NOT NULL DEFAULT '', synced_at REAL NOT NULL,"
    " PRIMARY KEY (source, key)) WITHOUT ROWID",
)


class SQLiteCheckpoints:
    """The connectors' checkpoints: what each source's last sync saw."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def checkpoint(self, source: str) -> Checkpoint:
        if "source_items" not in self._db.names():
            return Checkpoint()
        head = self._db.query(
            "SELECT cursor, last_run FROM source_checkpoints WHERE source = ?", (source,)
        )
        rows = self._db.query(
            "SELECT key, version, document_source, state, synced_at FROM source_items "
            "WHERE source = ?",
            (source,),
        )
        return checkpoint_from(head[0] if head else None, rows)

    def record_items(
        self, source: str, items: Sequence[tuple[str, ItemRecord]], removed: Sequence[str]
    ) -> None:
        if not items and not removed:
            return
        with self._db.transaction() as db:
            _ensure(db)
            db.executemany(
                "INSERT INTO source_items VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (source, key) DO UPDATE SET version = excluded.version, "
                "document_source = excluded.document_source, state = excluded.state, "
                "synced_at = excluded.synced_at",
                [
                    (source, key, r.version, r.document_source, r.state, r.synced_at)
                    for key, r in items
                ],
            )
            db.executemany(
                "DELETE FROM source_items WHERE source = ? AND key = ?",
                [(source, key) for key in removed],
            )

    def set_cursor(self, source: str, cursor: str | None, last_run: float) -> None:
        with self._db.transaction() as db:
            _ensure(db)
            db.execute(
                "INSERT INTO source_checkpoints VALUES (?, ?, ?) ON CONFLICT (source) "
                "DO UPDATE SET cursor = excluded.cursor, last_run = excluded.last_run",
                (source, cursor, last_run),
            )

    def drop_checkpoint(self, source: str) -> int:
        if "source_items" not in self._db.names():
            return 0
        with self._db.transaction() as db:
            db.execute("DELETE FROM source_checkpoints WHERE source = ?", (source,))
            return db.execute("DELETE FROM source_items WHERE source = ?", (source,)).rowcount

    def claimed_by_others(self, source: str, document_sources: Sequence[str]) -> dict[str, str]:
        if not document_sources or "source_items" not in self._db.names():
            return {}
        rows = self._db.query(
            "SELECT document_source, min(source) FROM source_items WHERE source != ? AND "
            "document_source IN (SELECT value FROM json_each(?)) GROUP BY document_source",
            (source, json.dumps(list(document_sources))),
        )
        return {row[0]: row[1] for row in rows}


def _ensure(db: sqlite3.Connection) -> None:
    for statement in _DDL:
        db.execute(statement)
