"""Table headers stored once per table (`ragwright.stores.table_headers`): the
``table_headers`` rows, the ``header_id`` of the chunk rows that continue a table, and the SQL
that puts a header back where a chunk is read or keyword-indexed.

A header row goes when the last chunk row (current or in a chunking slot) naming it goes: the
trigger that removes a chunk from the FTS5 index, which reads the header first, drops it then.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

#: The SQL function the upgrade addresses the headers it moves out with (`header_id`).
HEADER_ID_FUNCTION = "ragwright_header_id"


def header_text(row: str) -> str:
    """The header of the chunk ``row`` (``new``, ``old``, an alias or a table): its stored
    row's text, else what its metadata holds (an index from before the feature, or a value
    that never moved out)."""
    return (
        f"coalesce((SELECT h.text FROM table_headers h WHERE h.id = {row}.header_id), "
        f"json_extract({row}.metadata, '$.table_header'))"
    )


def read_metadata(row: str) -> str:
    """The metadata of the chunk ``row`` as it was written: its header back at its key."""
    return (
        f"iif({row}.header_id IS NULL, {row}.metadata, json_set({row}.metadata, "
        f"'$.table_header', (SELECT h.text FROM table_headers h WHERE h.id = {row}.header_id)))"
    )


def write_headers(db: sqlite3.Connection, headers: Iterable[tuple[str, str]]) -> None:
    """Store each (id, text) header not stored yet (before the chunk rows that name it)."""
    db.executemany("INSERT OR IGNORE INTO table_headers(id, text) VALUES (?, ?)", headers)


def _unnamed(row: str) -> str:
    return (
        f"DELETE FROM table_headers WHERE id = {row}.header_id "
        f"AND NOT EXISTS (SELECT 1 FROM chunks WHERE header_id = {row}.header_id) "
        f"AND NOT EXISTS (SELECT 1 FROM chunk_slots WHERE header_id = {row}.header_id)"
    )


#: Run after a chunk row is removed from the FTS5 index (see `schema`), and after a chunk row
#: in a slot is deleted: a header no row names any more goes.
DROP_UNNAMED = _unnamed("old")

_MOVED = (
    "json_type(metadata, '$.table_header') = 'text' AND json_extract(metadata, '$.table_header') "
    "<> ''"
)


def _move_out(table: str) -> str:
    return f"""
INSERT OR IGNORE INTO table_headers(id, text)
    SELECT {HEADER_ID_FUNCTION}(json_extract(metadata, '$.table_header')),
           json_extract(metadata, '$.table_header')
    FROM {table} WHERE {_MOVED};
UPDATE {table} SET header_id = {HEADER_ID_FUNCTION}(json_extract(metadata, '$.table_header')),
    metadata = json_set(metadata, '$.table_header', NULL) WHERE {_MOVED};"""


def table_headers_ddl(view: str, add_trigger: str, remove_trigger: str) -> str:
    """Feature "table_headers": the table, the column on the chunk rows and slots, every
    header moved out of the existing rows (the indexed text each row reads stays the same, so
    FTS5 is not rebuilt), and the view and triggers made again to read headers from their
    rows. One transaction."""
    return f"""
BEGIN;
CREATE TABLE IF NOT EXISTS table_headers (
    id   TEXT PRIMARY KEY,
    text TEXT NOT NULL
) WITHOUT ROWID;
ALTER TABLE chunks ADD COLUMN header_id TEXT;
ALTER TABLE chunk_slots ADD COLUMN header_id TEXT;
CREATE INDEX IF NOT EXISTS chunks_header ON chunks(header_id) WHERE header_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS chunk_slots_header ON chunk_slots(header_id)
    WHERE header_id IS NOT NULL;
{_move_out("chunks")}
{_move_out("chunk_slots")}
DROP TRIGGER IF EXISTS chunks_fts_add;
DROP TRIGGER IF EXISTS chunks_fts_remove;
DROP VIEW IF EXISTS chunks_indexed;
{view};
{add_trigger};
{remove_trigger};
CREATE TRIGGER IF NOT EXISTS chunk_slots_header_remove AFTER DELETE ON chunk_slots
WHEN old.header_id IS NOT NULL BEGIN
    {DROP_UNNAMED};
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_table_headers', '1');
COMMIT;
"""


#: What a read-only open of an index from before the feature reads instead (in the
#: connection's temporary database): no header rows, and chunk rows with no ``header_id``,
#: whose metadata still holds their headers.
EMPTY_HEADERS_DDL = """
CREATE TEMP TABLE IF NOT EXISTS table_headers (
    id   TEXT PRIMARY KEY,
    text TEXT NOT NULL
) WITHOUT ROWID;
CREATE TEMP VIEW IF NOT EXISTS chunks AS SELECT *, NULL AS header_id FROM main.chunks;
"""
