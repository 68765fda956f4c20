"""The statements every write path shares (a batch of documents, a move, a re-chunk's staging,
the graph's facts): binary COPY into a table, deleting documents with their chunks and
postings, and moving the BM25 counters. Functions of the `SchemaDatabase`, so each part that
writes takes only the database."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from psycopg import sql

from ragwright.stores.postgres.schema import STAT_SLOTS

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

Row = tuple[object, ...]
_DELETE_CHUNKS = (
    "WITH gone AS (DELETE FROM {s}.chunks WHERE document_id = ANY(%s) "
    "RETURNING tokens) SELECT count(*), coalesce(sum(tokens), 0) FROM gone"
)


def copy_rows(
    db: SchemaDatabase,
    conn: Connection[Any],
    table: str,
    columns: tuple[tuple[str, str], ...],
    rows: list[Row],
) -> None:
    """``rows`` into ``table`` by binary COPY, each column of the given (name, type)."""
    if not rows:
        return
    statement = sql.SQL("COPY {}.{} ({}) FROM STDIN (FORMAT BINARY)").format(
        db.identifier,
        sql.Identifier(table),
        sql.SQL(", ").join(sql.Identifier(name) for name, _ in columns),
    )
    with conn.cursor().copy(statement) as copy:
        copy.set_types([kind for _, kind in columns])
        for row in rows:
            copy.write_row(row)


def delete_documents(
    db: SchemaDatabase, conn: Connection[Any], ids: list[str]
) -> tuple[int, int, int]:
    """Delete these documents with their chunks and postings: how many (documents, chunks,
    chunk tokens) there were."""
    conn.execute(db.sql("DELETE FROM {s}.postings WHERE document_id = ANY(%s)"), (ids,))
    removed = conn.execute(db.sql(_DELETE_CHUNKS), (ids,)).fetchone()
    assert removed is not None
    documents = conn.execute(
        db.sql("DELETE FROM {s}.documents WHERE id = ANY(%s)"), (ids,)
    ).rowcount
    return documents, int(removed[0]), int(removed[1])


def move_counters(db: SchemaDatabase, conn: Connection[Any], chunks: int, tokens: int) -> None:
    """Move the BM25 counters, last in the transaction: the counter row is then held only
    while committing, so writers sharing a row wait briefly and never deadlock."""
    if chunks or tokens:
        conn.execute(
            db.sql("UPDATE {s}.bm25_stats SET chunks = chunks + %s, "
                   "tokens = tokens + %s "
                   f"WHERE slot = pg_backend_pid() %% {STAT_SLOTS}"),
            (chunks, tokens),
        )  # fmt: skip
