"""Document-level permissions in PostgreSQL: the same model as the SQLite store's
(`ragwright.stores.sqlite.permissions`). ``document_readers`` holds one (document, principal)
row per principal allowed to read a document; a document without rows is everyone's. The rows
are written in the transaction that writes the document and go with it (``ON DELETE
CASCADE``); the primary key answers "who may read this document" (a semi-join per candidate
row), the second index "what may this principal read"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql

from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.database import SchemaDatabase

if TYPE_CHECKING:
    from psycopg import Connection

READERS_DDL = """
CREATE TABLE IF NOT EXISTS {s}.document_readers (
    document_id text COLLATE "C" NOT NULL
        REFERENCES {s}.documents(id) ON DELETE CASCADE ON UPDATE CASCADE,
    principal   text COLLATE "C" NOT NULL,
    PRIMARY KEY (document_id, principal)
);
CREATE INDEX IF NOT EXISTS document_readers_by_principal
    ON {s}.document_readers (principal, document_id);
"""


def ensure_readers_schema(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the table to a collection made before it (its documents are everyone's)."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.document_readers",)).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(READERS_DDL))


def readable_condition(
    readers: sql.Composable, principals: Sequence[str], params: list[object]
) -> sql.Composable:
    """True for chunks ``c`` whose document has no readers or lists one of ``principals``."""
    return _readable(sql.SQL("c.document_id"), readers, principals, params)


def readable_documents(
    readers: sql.Composable, principals: Sequence[str], params: list[object]
) -> sql.Composable:
    """True for the documents ``d`` a caller with ``principals`` may read (with chunks or not)."""
    return _readable(sql.SQL("d.id"), readers, principals, params)


def _readable(
    document: sql.Composable,
    readers: sql.Composable,
    principals: Sequence[str],
    params: list[object],
) -> sql.Composable:
    everyone = sql.SQL("NOT EXISTS (SELECT 1 FROM {} r WHERE r.document_id = {})").format(
        readers, document
    )
    if not principals:
        return sql.SQL("({})").format(everyone)
    params.append(list(principals))
    listed = sql.SQL(
        "EXISTS (SELECT 1 FROM {} r WHERE r.document_id = {} AND r.principal = ANY(%s::text[]))"
    ).format(readers, document)
    return sql.SQL("({} OR {})").format(everyone, listed)


def write_readers(
    db: SchemaDatabase, conn: Connection[Any], readers: Sequence[tuple[str, Sequence[str]]]
) -> None:
    """Make each (document id, principals) pair the document's readers, in ``conn``'s
    transaction."""
    if not readers:
        return
    ids = [document_id for document_id, _ in readers]
    conn.execute(db.sql("DELETE FROM {s}.document_readers WHERE document_id = ANY(%s)"), (ids,))
    pairs = [(document_id, p) for document_id, principals in readers for p in principals]
    if pairs:
        conn.execute(
            db.sql(
                "INSERT INTO {s}.document_readers (document_id, principal) "
                "SELECT * FROM unnest(%s::text[], %s::text[]) ON CONFLICT DO NOTHING"
            ),
            ([d for d, _ in pairs], [p for _, p in pairs]),
        )
