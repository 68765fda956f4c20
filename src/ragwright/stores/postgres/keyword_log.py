"""The change log a serving process's keyword cache replays (`keyword_cache`): every chunk row
added or deleted, by its ``row_id``, stamped with the id of the transaction that did it; a row
whose metadata changed in place as removed and added (`metadata_index` reads that).

Writers commit in any order (many may write at once), so a sequence number would not say
what a reader has seen: a reader at ``seq`` 100 may later see 95 commit. A PostgreSQL
snapshot does say it. The cache records the snapshot it reflects; the changes it lacks are the
log's rows visible to a newer snapshot and not to its own (`pg_visible_in_snapshot`), found
through the index on ``xid`` from the old snapshot's ``xmin`` on. Triggers write the log, so
every path that adds or deletes chunks (a write, a delete, a move, a re-chunk's swap) is in it.

``row_id`` is an identity column, never reused: a replaced chunk is a new row, so a cache
masks the old slot and appends the new one (`KeywordMatrix.extended`).

The log is pruned by age (`prune`): a write deletes the changes older than `KEEP_SECONDS`
and records the newest transaction id it deleted (`PRUNED_SETTING`). A cache whose snapshot's
``xmin`` is at or below that mark may need a change that is gone, so it is built again instead
of replayed (`changes_since` says so); any other needs only changes of transactions from its
``xmin`` on, none of which were deleted. The rule holds whatever order writers commit in: a
transaction still running when a cache took its snapshot has an id at or above that ``xmin``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

from ragwright.stores.postgres.connections import LOCK_NAMESPACE, lock_schema
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
ALTER TABLE {s}.chunk_changes ADD COLUMN IF NOT EXISTS at timestamptz NOT NULL DEFAULT now();
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

#: A chunk's metadata changed in place (a move): logged as its row removed and added again, so
#: the metadata index (`metadata_index`) reads the row again; the keyword cache's net is nothing.
UPDATE_LOG_DDL = """
CREATE OR REPLACE FUNCTION {s}.chunk_changes_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.chunk_changes (row_id, added) VALUES (OLD.row_id, false), (NEW.row_id, true);
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER chunk_changes_update AFTER UPDATE OF metadata ON {s}.chunks
    FOR EACH ROW WHEN (OLD.metadata IS DISTINCT FROM NEW.metadata)
    EXECUTE FUNCTION {s}.chunk_changes_updated();
"""

#: How long a change is kept (a cache idle longer is built again on its next search).
KEEP_SECONDS = 24 * 3600
#: ``settings`` key: the newest transaction id whose changes `prune` deleted.
PRUNED_SETTING = "chunk_changes_pruned_xid"

#: The reader's snapshot and the log's table (a collection dropped and made again has another).
_NOW = "SELECT pg_current_snapshot()::text, to_regclass({log})::oid::bigint"
_SINCE = (
    "SELECT pg_current_snapshot()::text, to_regclass({log})::oid::bigint, "
    "array_agg(row_id), array_agg(added), "
    "coalesce((SELECT value::xid8 FROM {s}.settings WHERE key = {pruned}) "
    "  >= pg_snapshot_xmin({since}::pg_snapshot), false) FROM {s}.chunk_changes "
    "WHERE xid >= pg_snapshot_xmin({since}::pg_snapshot) "
    "AND NOT pg_visible_in_snapshot(xid, {since}::pg_snapshot)"
)
#: The changes older than the cut-off, found from the oldest transaction on (the index on
#: ``xid``) up to the first change young enough to keep, deleted by one writer at a time
#: (the others skip: a try-lock), and the mark moved up to the newest deleted.
_PRUNE = """
WITH gate AS (SELECT pg_try_advisory_xact_lock(%(namespace)s, hashtext(%(key)s)) AS ok),
keep AS (SELECT xid FROM {s}.chunk_changes WHERE at >= now() - make_interval(secs => %(age)s)
         ORDER BY xid LIMIT 1),
gone AS (DELETE FROM {s}.chunk_changes c WHERE (SELECT ok FROM gate)
         AND c.at < now() - make_interval(secs => %(age)s)
         AND ((SELECT xid FROM keep) IS NULL OR c.xid < (SELECT xid FROM keep))
         RETURNING c.xid)
INSERT INTO {s}.settings (key, value) SELECT %(setting)s, max(xid)::text FROM gone
HAVING count(*) > 0
ON CONFLICT (key) DO UPDATE
SET value = greatest({s}.settings.value::xid8, excluded.value::xid8)::text
"""


#: The parts `ensure_keyword_log` adds to a collection without them: the catalog query that
#: finds each (by its relation's qualified name), the relation, and the DDL that adds it.
_LOG_PARTS = (
    (
        "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'at' "
        "AND NOT attisdropped",
        "chunk_changes",
        KEYWORD_LOG_DDL,
    ),
    (
        "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) "
        "AND tgname = 'chunk_changes_update'",
        "chunks",
        UPDATE_LOG_DDL,
    ),
)


def ensure_keyword_log(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the row ids, the log (with its changes' times) and its triggers to a collection
    that has none yet, and the trigger logging metadata updates to one without it (once,
    whoever else is opening it)."""
    for found_by, relation, ddl in _LOG_PARTS:
        if conn.execute(found_by, (f"{db.schema}.{relation}",)).fetchone() is None:
            lock_schema(conn, db.schema)
            conn.execute(db.sql(ddl))


def prune(db: SchemaDatabase, conn: Connection[Any], keep_seconds: float = KEEP_SECONDS) -> None:
    """Delete the changes older than ``keep_seconds``, in ``conn``'s write transaction, and
    record the newest transaction id deleted (`PRUNED_SETTING`): a cache from before it is
    built again rather than replayed from an incomplete log."""
    conn.execute(
        db.sql(_PRUNE),
        {
            "namespace": LOCK_NAMESPACE,
            "key": f"{db.schema}/chunk_changes",
            "age": float(keep_seconds),
            "setting": PRUNED_SETTING,
        },
    )


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
    (None: another log, or some of those changes pruned, so nothing can be replayed), after
    ``first`` as `position` runs it.
    ``since`` must be a snapshot taken before this transaction's: what it saw is then all
    visible here."""
    return changes_in(_row(conn, first, since_statement(db, since)), since)


def since_statement(db: SchemaDatabase, since: Position) -> sql.Composed:
    """The statement `changes_in` reads (no parameters: it can go in a pipeline or in one
    message with others)."""
    return sql.SQL(_SINCE).format(
        s=db.identifier,
        log=_log(db),
        since=sql.Literal(since.snapshot),
        pruned=sql.Literal(PRUNED_SETTING),
    )


def changes_in(row: Any, since: Position) -> tuple[Position, LogChanges | None]:
    """`changes_since` from the row of `since_statement`."""
    now = Position(str(row[0]), int(row[1] or 0))
    if now.log != since.log or row[4]:  # another log, or changes it needs were pruned
        return now, None
    # Each row's net: added (and perhaps updated) since, removed, or nothing (added and
    # removed again, or updated in place: logged as removed and added).
    net: dict[int, int] = {}
    for row_id, was_added in zip(row[2] or (), row[3] or (), strict=True):
        net[int(row_id)] = net.get(int(row_id), 0) + (1 if was_added else -1)
    added = {r for r, n in net.items() if n > 0}
    removed = {r for r, n in net.items() if n < 0}
    return now, LogChanges(_ids(removed), _ids(added))


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
