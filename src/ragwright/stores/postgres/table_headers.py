"""Table headers stored once per table (`ragwright.stores.table_headers`) in PostgreSQL: a
``table_headers`` row per (document, header), the ``header_id`` of the chunk rows that
continue the table, and the SQL that puts a header back where a chunk is read.

A header row belongs to its document (``document_id``, as every table of a collection carries
it: a distributed collection keeps a document's rows together) and goes with it by cascade, so
no writer ever drops a header another writer is about to name: writers of one document queue
on its lock. A chunking in a slot names its document's rows too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.connections import lock_schema

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

#: The header of chunk ``c`` (its row's text, else what its metadata holds), for SQL that
#: goes through ``SchemaDatabase.sql`` (``{s}``).
HEADER_TEXT = (
    "coalesce((SELECT h.text FROM {s}.table_headers h WHERE h.document_id = c.document_id "
    "AND h.id = c.header_id), c.metadata->>'table_header')"
)
#: The metadata of chunk ``c`` as it was written: its header back at its key.
READ_METADATA = (
    "CASE WHEN c.header_id IS NULL THEN c.metadata ELSE c.metadata || jsonb_build_object("
    "'table_header', (SELECT h.text FROM {s}.table_headers h WHERE h.document_id = "
    "c.document_id AND h.id = c.header_id)) END"
)

#: `ragwright.stores.table_headers.header_id` in SQL: sha256 of "table_header", NUL, text.
_ID = "substr(encode(sha256(decode('7461626c655f68656164657200', 'hex') || convert_to({}, "
_ID += "'UTF8')), 'hex'), 1, 32)"
_HEADER = "metadata->>'table_header'"
_MOVED = f"jsonb_typeof(metadata->'table_header') = 'string' AND {_HEADER} <> ''"

#: The table, the column, and every header moved out of the existing chunk rows (the text
#: each row is read and was indexed with stays the same).
TABLE_HEADERS_DDL = f"""
CREATE TABLE IF NOT EXISTS {{s}}.table_headers (
    document_id text COLLATE "C" NOT NULL
        REFERENCES {{s}}.documents(id) ON DELETE CASCADE ON UPDATE CASCADE,
    id          text COLLATE "C" NOT NULL,
    text        text NOT NULL,
    PRIMARY KEY (document_id, id)
);
ALTER TABLE {{s}}.chunks ADD COLUMN IF NOT EXISTS header_id text COLLATE "C";
INSERT INTO {{s}}.table_headers (document_id, id, text)
    SELECT DISTINCT document_id, {_ID.format(_HEADER)}, {_HEADER} FROM {{s}}.chunks
    WHERE {_MOVED} ON CONFLICT DO NOTHING;
UPDATE {{s}}.chunks SET header_id = {_ID.format(_HEADER)},
    metadata = metadata || jsonb_build_object('table_header', NULL) WHERE {_MOVED};
"""

#: The slots' column (their table is made when a chunking is first staged).
SLOT_HEADERS_DDL = 'ALTER TABLE {s}.chunk_slots ADD COLUMN IF NOT EXISTS header_id text COLLATE "C"'


def ensure_table_headers(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Give a collection made before stored headers its table and move its headers there."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.table_headers",)).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(TABLE_HEADERS_DDL))
    slots = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.chunk_slots",)).fetchone()
    if slots is not None and slots[0] is not None:
        conn.execute(db.sql(SLOT_HEADERS_DDL))
        conn.execute(
            db.sql(
                f"INSERT INTO {{s}}.table_headers (document_id, id, text) SELECT DISTINCT "
                f"s.document_id, {_ID.format(_HEADER)}, {_HEADER} FROM {{s}}.chunk_slots s "
                f"JOIN {{s}}.documents d ON d.id = s.document_id WHERE {_MOVED} "
                "ON CONFLICT DO NOTHING"
            )
        )
        conn.execute(
            db.sql(
                f"UPDATE {{s}}.chunk_slots SET header_id = {_ID.format(_HEADER)}, metadata = "
                f"metadata || jsonb_build_object('table_header', NULL) WHERE {_MOVED}"
            )
        )


def write_headers(
    db: SchemaDatabase, conn: Connection[Any], headers: Iterable[tuple[str, str, str]]
) -> None:
    """Store each (document id, header id, text) not stored yet, in ``conn``'s transaction."""
    rows = list(headers)
    if rows:
        with conn.cursor() as cursor:
            cursor.executemany(
                db.sql(
                    "INSERT INTO {s}.table_headers (document_id, id, text) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING"
                ),
                rows,
            )
