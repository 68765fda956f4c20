"""Moves (`ports.DocumentMove`): a renamed file's document re-keyed in place, in one
transaction. The chunk rows keep their rowid, text and vector, so the FTS5 index (keyed by
rowid, external content) stays valid and nothing is embedded or tokenized again; only the ids,
the source and the metadata change."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ragwright.models import Chunk, Document
from ragwright.stores.moves import StoredChunk, check_move
from ragwright.stores.rows import dump_json
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.permissions import write_readers
from ragwright.stores.sqlite.table_headers import read_metadata
from ragwright.stores.table_headers import split_header


class SQLiteMoves:
    """Moving a document to another source, in place."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def move_document(self, document_id: str, moved: Document, chunks: Sequence[Chunk]) -> bool:
        with self._db.transaction() as db:
            found = db.execute(
                "SELECT source, content FROM documents WHERE id = ?", (document_id,)
            ).fetchone()
            if found is None:
                return False
            rows = db.execute(
                "SELECT rowid, idx, text, char_start, char_end, "
                f"{read_metadata('chunks')} FROM chunks WHERE document_id = ?",
                (document_id,),
            ).fetchall()
            stored = [StoredChunk(r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]
            check_move(moved, chunks, found[0], found[1], stored)
            rowids = {r[1]: r[0] for r in rows}
            # The chunks point at the document's old id until the last update: checked at commit.
            db.execute("PRAGMA defer_foreign_keys = ON")
            db.execute(
                "DELETE FROM documents WHERE (id = ? OR source = ?) AND id != ?",
                (moved.id, moved.source, document_id),
            )
            db.execute(
                "UPDATE documents SET id = ?, source = ?, metadata = ?, "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                (moved.id, moved.source, dump_json(moved.metadata, moved.source), document_id),
            )
            write_readers(db, moved.id, moved.principals)  # a move may change who reads it
            db.executemany(
                "UPDATE chunks SET id = ?, document_id = ?, metadata = ? WHERE rowid = ?",
                [
                    (
                        chunk.id,
                        moved.id,
                        # The header is the stored one (checked): its row stays named.
                        dump_json(
                            split_header({**moved.metadata, **chunk.metadata})[0], moved.source
                        ),
                        rowids[chunk.index],
                    )
                    for chunk in chunks
                ],
            )
        return True
