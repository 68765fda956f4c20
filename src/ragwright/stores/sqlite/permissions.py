"""Document-level permissions in SQLite: who may read each document, and the condition that
keeps a caller's documents inside a search's or lookup's query (see `ragwright.permissions`).

``document_readers`` holds one (document, principal) row per principal allowed to read a
document; a document without rows is everyone's. Its rows are written in the transaction that
writes the document and go with it (``ON DELETE CASCADE``; ``ON UPDATE CASCADE`` follows a
move's new id), so no reader ever sees a document without its permissions. The primary key
answers "who may read this document" and the second index "what may this principal read".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

#: Feature "permissions" (additive): created empty on an existing index, whose documents are
#: then everyone's until they are written with principals.
READERS_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS document_readers (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE ON UPDATE CASCADE,
    principal   TEXT NOT NULL,
    PRIMARY KEY (document_id, principal)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_readers_by_principal
    ON document_readers(principal, document_id);
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_permissions', '1');
COMMIT;
"""


#: What a read-only open of an index from before the feature reads instead: an empty table in
#: the connection's temporary database (writable when the file is not), so every document is
#: everyone's, as it is in that index.
EMPTY_READERS_DDL = """
CREATE TEMP TABLE IF NOT EXISTS document_readers (
    document_id TEXT NOT NULL,
    principal   TEXT NOT NULL,
    PRIMARY KEY (document_id, principal)
) WITHOUT ROWID"""


def readable_condition(principals: Sequence[str], params: list[object], column: str) -> str:
    """True for the rows whose document (``column``, such as ``c.document_id``) has no
    readers or lists one of ``principals``: two lookups on the primary key per row."""
    everyone = f"NOT EXISTS (SELECT 1 FROM document_readers r WHERE r.document_id = {column})"
    if not principals:
        return f"({everyone})"
    params.extend(principals)
    marks = ", ".join("?" for _ in principals)
    listed = (
        f"EXISTS (SELECT 1 FROM document_readers r WHERE r.document_id = {column} "
        f"AND r.principal IN ({marks}))"
    )
    return f"({everyone} OR {listed})"


def write_readers(db: sqlite3.Connection, document_id: str, principals: Sequence[str]) -> None:
    """Make ``principals`` the readers of a document (inside the caller's transaction)."""
    db.execute("DELETE FROM document_readers WHERE document_id = ?", (document_id,))
    db.executemany(
        "INSERT OR IGNORE INTO document_readers(document_id, principal) VALUES (?, ?)",
        [(document_id, principal) for principal in principals],
    )
