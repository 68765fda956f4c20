"""Writes: a batch of whole documents (each replacing its previous version) with their graph
facts in one transaction, and deletes, which cascade to chunks, vectors, the BM25 index and
the graph's evidence (whose triggers update the entities and edges)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ragwright.errors import StoreError
from ragwright.models import Document
from ragwright.ports import ChunkBatch, DocumentWrite
from ragwright.stores.checks import check_write
from ragwright.stores.graph_facts import FactRows, write_fact_rows
from ragwright.stores.rows import document_row, dump_json, sections_json
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.graph_writes import insert_facts
from ragwright.stores.sqlite.permissions import write_readers
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.sqlite.table_headers import write_headers
from ragwright.stores.table_headers import header_id, split_header
from ragwright.stores.writes import bound_space

_Row = tuple[object, ...]
#: The last parameter says whether to insert (see `SQLiteWrites._replace_document`).
_INSERT_DOCUMENT = (
    "INSERT INTO documents(id, source, content, content_hash, fingerprint, metadata, sections) "
    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE ?"
)


class SQLiteWrites:
    """Whole-document writes and deletes, checked against the recorded space."""

    def __init__(self, db: Database, settings: SQLiteSettings) -> None:
        self._db = db
        self._settings = settings

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace several documents in one transaction. Each chunk's row (its
        vector as bytes, its metadata as JSON) is made as SQLite asks for it, so a huge
        document's rows are never all in memory beside its chunks and vectors."""
        if not batch:
            return
        space = bound_space(self._settings.space)
        for item in batch:
            check_write(item, space)
        facts = [write_fact_rows(item) for item in batch]
        with self._db.transaction() as db:
            for item, fact_rows in zip(batch, facts, strict=True):
                self._replace_document(db, item)
                self._insert_chunks(db, item, fact_rows)

    @staticmethod
    def _replace_document(db: sqlite3.Connection, item: DocumentWrite) -> None:
        db.execute(
            "DELETE FROM documents WHERE id = ? OR source = ?",
            (item.document.id, item.document.source),
        )
        db.execute(_INSERT_DOCUMENT, (*_document_row(item), True))
        # Python's sqlite3 keeps the statement cached with its parameters bound, and SQLite's
        # copy of the content with them, until it runs again: once more now, inserting
        # nothing, so a huge document's text is not held twice while its chunks are written.
        db.execute(_INSERT_DOCUMENT, (None,) * 7 + (False,))
        write_readers(db, item.document.id, item.document.principals)

    @staticmethod
    def _insert_chunks(
        db: sqlite3.Connection, item: DocumentWrite, fact_rows: Sequence[FactRows]
    ) -> None:
        write_headers(db, chunk_headers(item).items())  # before the rows that name them
        db.executemany(
            "INSERT INTO chunks(id, document_id, idx, text, char_start, char_end, "
            "metadata, vector, header_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk_rows(item),
        )
        if fact_rows:
            rowids = dict(
                db.execute(
                    "SELECT id, rowid FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps([facts.chunk_id for facts in fact_rows]),),
                ).fetchall()
            )
            for chunk_facts in fact_rows:
                insert_facts(db, rowids[chunk_facts.chunk_id], chunk_facts)

    def write_streamed(
        self, document: Document, fingerprint: str, batches: Iterable[ChunkBatch]
    ) -> int:
        """Insert or replace one document, then its chunks batch by batch as ``batches``
        yields them, in one transaction (see `StreamedWrite`). The document's row goes first,
        while no chunk is in memory yet: SQLite copies its text twice on the way in."""
        space = bound_space(self._settings.space)
        item = DocumentWrite(
            document, (), np.empty((0, space.dimension), dtype=np.float32), fingerprint
        )
        check_write(item, space)
        written = 0
        with self._db.transaction() as db:
            self._replace_document(db, item)
            for batch in batches:
                part = DocumentWrite(
                    document, batch.chunks, batch.vectors, fingerprint, batch.facts
                )
                check_write(part, space, document_checked=True)
                if any(chunk.index != written + n for n, chunk in enumerate(batch.chunks)):
                    raise StoreError(f"{document.source}: chunks must come in index order")
                self._insert_chunks(db, part, write_fact_rows(part))
                written += len(batch.chunks)
        return written

    def delete_many(self, document_ids: Iterable[str]) -> int:
        ids = list(document_ids)
        if not ids:
            return 0
        with self._db.transaction() as db:
            return sum(db.execute("DELETE FROM documents WHERE id = ?", (i,)).rowcount for i in ids)


def _document_row(item: DocumentWrite) -> _Row:
    document = item.document
    metadata = dump_json(document.metadata, document.source)
    return document_row(item, metadata, json.dumps(sections_json(document)))


def chunk_headers(item: DocumentWrite) -> dict[str, str]:
    """The table headers the chunks of ``item`` carry, by id (`table_headers`)."""
    headers: dict[str, str] = {}
    for chunk in item.chunks:
        header = split_header({**item.document.metadata, **chunk.metadata})[1]
        if header is not None:
            headers.setdefault(header_id(header), header)
    return headers


def chunk_rows(item: DocumentWrite) -> Iterator[_Row]:
    """The rows of the chunks of a checked write (vectors of the space's shape, finite), each
    naming its table header's row (`chunk_headers`) instead of holding it."""
    document = item.document
    as_float32 = np.ascontiguousarray(item.vectors, dtype="<f4")
    for chunk, vector in zip(item.chunks, as_float32, strict=True):
        metadata, header = split_header({**document.metadata, **chunk.metadata})
        yield (
            chunk.id,
            chunk.document_id,
            chunk.index,
            chunk.text,
            chunk.char_start,
            chunk.char_end,
            dump_json(metadata, document.source),
            vector.tobytes(),
            None if header is None else header_id(header),
        )
