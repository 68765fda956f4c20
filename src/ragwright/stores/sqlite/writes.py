"""Writes: a batch of whole documents (each replacing its previous version) with their graph
facts in one transaction, and deletes, which cascade to chunks, vectors, the BM25 index and
the graph's evidence (whose triggers update the entities and edges)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from ragwright.ports import DocumentWrite
from ragwright.stores.checks import check_write
from ragwright.stores.graph_facts import write_fact_rows
from ragwright.stores.rows import document_row, dump_json, sections_json
from ragwright.stores.sqlite.graph_writes import insert_facts
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.writes import SingleWrites, bound_space

_Row = tuple[object, ...]


class SQLiteWrites(SingleWrites, SQLiteSettings):
    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace several documents in one transaction. Each chunk's row (its
        vector as bytes, its metadata as JSON) is made as SQLite asks for it, so a huge
        document's rows are never all in memory beside its chunks and vectors."""
        if not batch:
            return
        space = bound_space(self.space)
        for item in batch:
            check_write(item, space)
        facts = [write_fact_rows(item) for item in batch]
        with self._db.transaction() as db:
            for item, fact_rows in zip(batch, facts, strict=True):
                db.execute(
                    "DELETE FROM documents WHERE id = ? OR source = ?",
                    (item.document.id, item.document.source),
                )
                db.execute(
                    "INSERT INTO documents(id, source, content, content_hash, fingerprint, "
                    "metadata, sections) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    _document_row(item),
                )
                db.executemany(
                    "INSERT INTO chunks(id, document_id, idx, text, char_start, char_end, "
                    "metadata, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    _chunk_rows(item),
                )
                if fact_rows:
                    rowids = dict(
                        db.execute(
                            "SELECT id, rowid FROM chunks WHERE document_id = ?",
                            (item.document.id,),
                        ).fetchall()
                    )
                    for chunk_facts in fact_rows:
                        insert_facts(db, rowids[chunk_facts.chunk_id], chunk_facts)

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


def _chunk_rows(item: DocumentWrite) -> Iterator[_Row]:
    """The rows of the chunks of a checked write (vectors of the space's shape, finite)."""
    document = item.document
    as_float32 = np.ascontiguousarray(item.vectors, dtype="<f4")
    for chunk, vector in zip(item.chunks, as_float32, strict=True):
        yield (
            chunk.id,
            chunk.document_id,
            chunk.index,
            chunk.text,
            chunk.char_start,
            chunk.char_end,
            dump_json({**document.metadata, **chunk.metadata}, document.source),
            vector.tobytes(),
        )
