"""Document-level permissions in SQLite: who may read each document, and the condition that
keeps a caller's documents inside a search's or lookup's query (see `ragwright.permissions`).

- ``document_readers``: one (document, principal) row per principal allowed to read a document;
  a document without rows is everyone's. Written in the transaction that writes the document
  and gone with it (``ON DELETE CASCADE``; ``ON UPDATE CASCADE`` follows a move's new id).
- ``chunk_readers``: the same per chunk row, as `chunk_fields` is for metadata: (principal,
  chunk row) with `EVERYONE` for the chunks of everyone's documents, kept by triggers on
  ``chunks`` in the writer's transaction. A caller's readable rows are then one range of its
  primary key per principal, never a scan of the chunks, so the permission test joins the
  indexed row-id path of a user's filter (`filters.matching_rowids_query`).

A document's readers are written before its chunks (`write_readers` then the inserts), and a
move re-points its chunks after rewriting them, so the triggers always read the current readers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

#: The ``chunk_readers`` principal of chunks everyone may read (no principal can be empty).
EVERYONE = ""

_CHUNK_READERS_OF_NEW = """
    INSERT OR IGNORE INTO chunk_readers(principal, chunk_rowid)
        SELECT r.principal, new.rowid FROM document_readers r WHERE r.document_id = new.document_id
        UNION ALL
        SELECT '', new.rowid WHERE NOT EXISTS (
            SELECT 1 FROM document_readers r WHERE r.document_id = new.document_id
        );"""

#: Feature "permissions" (additive): created on an existing index with every chunk everyone's.
READERS_DDL = f"""
BEGIN;
CREATE TABLE IF NOT EXISTS document_readers (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE ON UPDATE CASCADE,
    principal   TEXT NOT NULL,
    PRIMARY KEY (document_id, principal)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_readers (
    principal   TEXT NOT NULL,
    chunk_rowid INTEGER NOT NULL,
    PRIMARY KEY (principal, chunk_rowid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_readers_by_row ON chunk_readers(chunk_rowid);
INSERT OR IGNORE INTO chunk_readers(principal, chunk_rowid) SELECT '', rowid FROM chunks;
CREATE TRIGGER IF NOT EXISTS chunk_readers_add AFTER INSERT ON chunks BEGIN
    {_CHUNK_READERS_OF_NEW}
END;
CREATE TRIGGER IF NOT EXISTS chunk_readers_remove AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_readers WHERE chunk_rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS chunk_readers_move AFTER UPDATE OF document_id ON chunks BEGIN
    DELETE FROM chunk_readers WHERE chunk_rowid = old.rowid;
    {_CHUNK_READERS_OF_NEW}
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_permissions', '1');
COMMIT;
"""

#: What a read-only open of an index from before the feature reads instead, in the
#: connection's temporary database (writable when the file is not): no readers, and every
#: chunk everyone's, as it is in that index.
EMPTY_READERS_DDL = """
CREATE TEMP TABLE IF NOT EXISTS document_readers (
    document_id TEXT NOT NULL,
    principal   TEXT NOT NULL,
    PRIMARY KEY (document_id, principal)
) WITHOUT ROWID;
CREATE TEMP VIEW IF NOT EXISTS chunk_readers(principal, chunk_rowid) AS
    SELECT '', rowid FROM main.chunks;
"""


def readable_rows(principals: Sequence[str], params: list[object]) -> str:
    """A query of the chunk row ids a caller with ``principals`` may read (a row may come
    twice, once per principal that reads it: the callers take distinct ids)."""
    params.extend([EVERYONE, *principals])
    marks = ", ".join("?" for _ in range(len(principals) + 1))
    return f"SELECT chunk_rowid FROM chunk_readers WHERE principal IN ({marks})"


def readable_condition(principals: Sequence[str], params: list[object]) -> str:
    """True for the chunks ``c`` a caller with ``principals`` may read."""
    return f"(c.rowid IN ({readable_rows(principals, params)}))"


def readable_documents(principals: Sequence[str]) -> tuple[str, list[object]]:
    """True for the documents ``d`` a caller with ``principals`` may read, from their readers
    (a document with no chunks has no `chunk_readers` row)."""
    marks = ", ".join("?" for _ in principals)
    listed = (
        f" OR EXISTS (SELECT 1 FROM document_readers r WHERE r.document_id = d.id AND "
        f"r.principal IN ({marks}))"
        if principals
        else ""
    )
    condition = (
        f"(NOT EXISTS (SELECT 1 FROM document_readers r WHERE r.document_id = d.id){listed})"
    )
    return condition, list(principals)


def write_readers(db: sqlite3.Connection, document_id: str, principals: Sequence[str]) -> None:
    """Make ``principals`` the readers of a document (inside the caller's transaction), before
    its chunks are inserted or re-pointed (their triggers copy the readers)."""
    db.execute("DELETE FROM document_readers WHERE document_id = ?", (document_id,))
    db.executemany(
        "INSERT OR IGNORE INTO document_readers(document_id, principal) VALUES (?, ?)",
        [(document_id, principal) for principal in principals if principal],
    )
