"""Writes: a batch of whole documents (each replacing its previous version) in one
transaction, and deletes, which cascade to chunks, vectors and the BM25 index."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict

import numpy as np

from ragwright.errors import StoreError
from ragwright.models import Chunk, Document, EmbeddingSpace
from ragwright.ports import DocumentWrite, Vectors
from ragwright.stores.checks import check_write
from ragwright.stores.sqlite.rows import dump_json
from ragwright.stores.sqlite.settings import SQLiteSettings

_Row = tuple[object, ...]


class SQLiteWrites(SQLiteSettings):
    def upsert(
        self,
        document: Document,
        chunks: Sequence[Chunk],
        vectors: Vectors,
        fingerprint: str = "",
    ) -> None:
        """Insert or replace one document with its chunks, atomically."""
        self.write([DocumentWrite(document, chunks, vectors, fingerprint)])

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace several documents in one transaction."""
        if not batch:
            return
        space = self.space
        if space is None:
            raise StoreError("bind an embedding space (bind_space) before writing")
        rows = [_rows(item, space) for item in batch]
        with self._db.transaction() as db:
            for item, (document_row, chunk_rows) in zip(batch, rows, strict=True):
                db.execute(
                    "DELETE FROM documents WHERE id = ? OR source = ?",
                    (item.document.id, item.document.source),
                )
                db.execute(
                    "INSERT INTO documents(id, source, content, content_hash, fingerprint, "
                    "metadata, sections) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    document_row,
                )
                db.executemany(
                    "INSERT INTO chunks(id, document_id, idx, text, char_start, char_end, "
                    "metadata, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    chunk_rows,
                )

    def delete(self, document_id: str) -> bool:
        """Delete a document and everything derived from it. True when it existed."""
        return self.delete_many([document_id]) == 1

    def delete_many(self, document_ids: Iterable[str]) -> int:
        ids = list(document_ids)
        if not ids:
            return 0
        with self._db.transaction() as db:
            return sum(db.execute("DELETE FROM documents WHERE id = ?", (i,)).rowcount for i in ids)


def _rows(item: DocumentWrite, space: EmbeddingSpace) -> tuple[_Row, list[_Row]]:
    """The document's row and its chunks' rows, checked: vectors of the space's shape and
    finite, chunks that are exact spans of this document."""
    document, chunks, vectors = item.document, item.chunks, item.vectors
    check_write(item, space)
    document_row = (
        document.id,
        document.source,
        document.content,
        document.content_hash,
        item.fingerprint or document.content_hash,
        dump_json(document.metadata, document.source),
        json.dumps([asdict(s) for s in document.sections]),
    )
    as_float32 = np.ascontiguousarray(vectors, dtype="<f4")
    chunk_rows: list[_Row] = []
    for chunk, vector in zip(chunks, as_float32, strict=True):
        metadata = {**document.metadata, **chunk.metadata}
        chunk_rows.append(
            (
                chunk.id,
                chunk.document_id,
                chunk.index,
                chunk.text,
                chunk.char_start,
                chunk.char_end,
                dump_json(metadata, document.source),
                vector.tobytes(),
            )
        )
    return document_row, chunk_rows
