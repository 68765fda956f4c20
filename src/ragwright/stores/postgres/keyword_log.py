"""The change log a serving process's keyword cache replays (`keyword_cache`): every chunk row
added or deleted, by its ``row_id``, stamped with the id of the transaction that did it.

Writers commit in any order (many may write at once), so a sequence number would not say
what a reader has seen: a reader at ``seq`` 100 may later see 95 commit. A PostgreSQL
snapshot does say it. The cache records the snapshot it reflects; the changes it lacks are the
log's rows visible to a newer snapshot and not to its own (`pg_visible_in_snapshot`), found
through the index on ``xid`` from the old snapshot's ``xmin`` on. Triggers write the log, so
every path that adds or deletes chunks (a write, a delete, a move, a re-chunk's swap) is in it.

``row_id`` is an identity column, never reused: a replaced chunk is a new row, so a cache
masks the old slot and appends the new one (`KeywordMatrix.extended`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection

KEYWORD_LOG_DDL = """
ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS row_id bigint GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX IF NOT EXISTS chunks_row_id ON {s}.chunks (row_id);
CREATE TABLE IF NOT EXISTS {s}.chunk_changes (
    xid    xid8 NOT NULL DEFAULT pg_current_xact_id(),
    row_id bigint NOT NULL,
    added  boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_changes_xid ON {s}.chunk_changes (xid);
CREATE OR REPLACE FUNCTION {s}.chunk_changes_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.chunk_changes (row_id, added) SELECT row_id, true FROM added_rows;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION {s}.chunk_changes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.chunk_changes (row_id, added) SELECT row_id, false FROM removed_rows;
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER chunk_changes_insert AFTER INSERT ON {s}.chunks
    REFERENCING NEW TABLE AS added_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {s}.chunk_changes_added();
CREATE OR REPLACE TRIGGER chunk_changes_delete AFTER DELETE ON {s}.chunks
    REFERENCING OLD TABLE AS removed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION {s}.chunk_changes_removed();
"""

#: The reader's snapshot and the log's table (a collection dropped and made again has another).
_NOW = "SELECT pg_current_snapshot()::text, to_regclass({log})::oid::bigint"
_SINCE = (
    "SELECT pg_current_snapshot()::text, to_regclass({log})::oid::bigint, "
    "array_agg(row_id), array_agg(added) FROM {s}.chunk_changes "
    "WHERE xid >= pg_snapshot_xmin({since}::pg_snapshot) "
    "AND NOT pg_visible_in_snapshot(xid, {since}::pg_snapshot)"
)


def ensure_keyword_log(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the row ids, the log and its triggers to a collection that has none yet (once,
    whoever else is opening it)."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.chunk_changes",)).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(KEYWORD_LOG_DDL))


@dataclass(frozen=True, slots=True)
class Position:
    """Where a reader stands: its snapshot, and which log (table oid) it read."""

    snapshot: str
    log: int


@dataclass(frozen=True, slots=True)
class LogChanges:
    """The chunk rows added and removed between two snapshots, net of rows added and
    removed again between them."""

    removed: RowIds
    added: RowIds

    @property
    def size(self) -> int:
        return int(self.removed.size + self.added.size)


def position(db: SchemaDatabase, conn: Connection[Any], first: str = "") -> Position:
    """The current transaction's position (its first statement takes its snapshot), after
    ``first`` (statements sent with it, in one round trip)."""
    row = _row(conn, first, sql.SQL(_NOW).format(log=_log(db)))
    return Position(str(row[0]), int(row[1] or 0))


def changes_since(
    db: SchemaDatabase, conn: Connection[Any], since: Position, first: str = ""
) -> tuple[Position, LogChanges | None]:
    """The current transaction's position and the changes it sees that ``since`` did not
    (None: another log, so nothing can be replayed), after ``first`` as `position` runs it.
    ``since`` must be a snapshot taken before this transaction's: what it saw is then all
    visible here."""
    statement = sql.SQL(_SINCE).format(
        s=db.identifier, log=_log(db), since=sql.Literal(since.snapshot)
    )
    row = _row(conn, first, statement)
    now = Position(str(row[0]), int(row[1] or 0))
    if now.log != since.log:
        return now, None
    added: set[int] = set()
    removed: set[int] = set()
    for row_id, was_added in zip(row[2] or (), row[3] or (), strict=True):
        (added if was_added else removed).add(int(row_id))
    both = added & removed  # added and removed again since: nothing to do
    return now, LogChanges(_ids(removed - both), _ids(added - both))


def _log(db: SchemaDatabase) -> sql.Literal:
    return sql.Literal(f"{db.schema}.chunk_changes")


def _row(conn: Connection[Any], first: str, statement: sql.Composed) -> Any:
    """The one row of ``statement``, sent after ``first`` in one message (so with its values
    as literals: several statements go by the simple query protocol, which takes no
    parameters)."""
    if not first:
        row = conn.execute(statement).fetchone()
    else:
        cursor = conn.execute(sql.SQL(first + "; ") + statement)
        cursor.nextset()
        row = cursor.fetchone()
    assert row is not None
    return row


def _ids(values: set[int]) -> RowIds:
    return np.array(sorted(values), dtype=np.int64)
