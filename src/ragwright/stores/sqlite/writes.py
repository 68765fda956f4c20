"""Writes: a batch of whole documents (each replacing its previous version) with their graph
facts in one transaction, and deletes, which cascade to chunks, vectors, the BM25 index and
the graph's evidence (whose triggers update the entities and edges)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import numpy as np

from ragwright.models import EmbeddingSpace
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
        """Insert or replace several documents in one transaction."""
        if not batch:
            return
        space = bound_space(self.space)
        rows = [_rows(item, space) for item in batch]
        facts = [write_fact_rows(item) for item in batch]
        with self._db.transaction() as db:
            for item, (document_row, chunk_rows), fact_rows in zip(batch, rows, facts, strict=True):
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


def _rows(item: DocumentWrite, space: EmbeddingSpace) -> tuple[_Row, list[_Row]]:
    """The document's row and its chunks' rows, checked: vectors of the space's shape and
    finite, chunks that are exact spans of this document."""
    document, chunks, vectors = item.document, item.chunks, item.vectors
    check_write(item, space)
    row = document_row(
        item, dump_json(document.metadata, document.source), json.dumps(sections_json(document))
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
    return row, chunk_rows
