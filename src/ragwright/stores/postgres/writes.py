"""Writes: a batch of whole documents in one transaction (binary COPY of documents, chunks,
BM25 postings and graph facts, each document replacing any stored one with its id or source,
the BM25 counters and the graph version moved with them), and deletes."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragwright.models import KEYWORD_HEADER, TABLE_HEADER, Chunk
from ragwright.ports import DocumentWrite
from ragwright.stores.checks import check_write
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.graph_facts import FactRows, write_fact_rows
from ragwright.stores.postgres.graph_writes import bump_graph_version, copy_facts, had_facts
from ragwright.stores.postgres.keyword_log import prune
from ragwright.stores.postgres.permissions import write_readers
from ragwright.stores.postgres.row_writes import copy_rows, delete_documents, move_counters
from ragwright.stores.postgres.rows import jsonb
from ragwright.stores.postgres.settings import PostgresSettings
from ragwright.stores.postgres.table_headers import write_headers
from ragwright.stores.rows import document_row, sections_json
from ragwright.stores.table_headers import header_id, split_header
from ragwright.stores.writes import SingleWrites, bound_space

if TYPE_CHECKING:
    from psycopg import Connection

_Row = tuple[object, ...]

#: Writers (and deleters) of the same documents queue here, in one order (no deadlock),
#: instead of failing on each other's unique keys.
_LOCK_KEYS = (
    "SELECT pg_advisory_xact_lock(k) FROM "
    "(SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest(%s::text[]) AS x) t "
    "ORDER BY k"
)
_DOCUMENT_COPY = (
    ("id", "text"), ("source", "text"), ("content", "text"), ("content_hash", "text"),
    ("fingerprint", "text"), ("metadata", "jsonb"), ("sections", "jsonb"),
)  # fmt: skip
_CHUNK_COPY = (
    ("id", "text"), ("document_id", "text"), ("idx", "int4"), ("text", "text"),
    ("char_start", "int4"), ("char_end", "int4"), ("metadata", "jsonb"), ("tokens", "int4"),
    ("embedding", "vector"), ("header_id", "text"),
)  # fmt: skip
_POSTING_COPY = (
    ("term", "text"), ("chunk_id", "text"), ("document_id", "text"), ("tf", "int4"),
    ("dl", "int4"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Rows:
    """One document's rows, ready to copy in."""

    document: _Row
    chunks: list[_Row]
    postings: list[_Row]
    tokens: int
    facts: list[FactRows]
    principals: tuple[str, ...] = ()
    #: (document id, header id, text) of the table headers its chunks name.
    headers: tuple[tuple[str, str, str], ...] = ()


class PostgresWrites(SingleWrites, PostgresSettings):
    _terms: FTS5Terms

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace the documents of ``batch`` in one transaction. Each replaces any
        stored document with its id or its source; within the batch a later document replaces
        an earlier one the same way."""
        if not batch:
            return
        space = bound_space(self.space)
        for item in batch:
            check_write(item, space)  # a NUL, which PostgreSQL cannot hold, included
        rows = self._rows(_last_of_each(batch))
        ids = [item.document.id for item in batch]
        sources = [item.document.source for item in batch]
        self._db.run(lambda conn: self._write(conn, ids, sources, rows), "writing documents")

    def delete_many(self, document_ids: Iterable[str]) -> int:
        """Delete documents by id in one transaction; returns how many existed."""
        ids = list(dict.fromkeys(document_ids))
        if not ids:
            return 0

        def work(conn: Connection[Any]) -> int:
            conn.execute(_LOCK_KEYS, (ids,))
            graph_changed = had_facts(self._db, conn, ids)
            documents, chunks, tokens = delete_documents(self._db, conn, ids)
            prune(self._db, conn)  # the change log's old rows, which caches replay no more
            move_counters(self._db, conn, -chunks, -tokens)
            if graph_changed:
                bump_graph_version(self._db, conn)
            return documents

        return self._db.run(work, "deleting documents")

    def _rows(self, batch: list[DocumentWrite]) -> list[_Rows]:
        texts = [
            _indexed_text(chunk, {**item.document.metadata, **chunk.metadata})
            for item in batch
            for chunk in item.chunks
        ]
        counted = iter(self._terms.count(texts))
        prepared = []
        for item in batch:
            document = item.document
            vectors = np.ascontiguousarray(item.vectors, dtype=np.float32)
            chunk_rows: list[_Row] = []
            posting_rows: list[_Row] = []
            tokens = 0
            headers: dict[str, str] = {}
            for chunk, vector in zip(item.chunks, vectors, strict=True):
                counts = next(counted)
                tokens += counts.length
                metadata, header = split_header({**document.metadata, **chunk.metadata})
                named = None if header is None else header_id(header)
                if named is not None and header is not None:
                    headers.setdefault(named, header)
                chunk_rows.append(
                    (chunk.id, document.id, chunk.index, chunk.text, chunk.char_start,
                     chunk.char_end, jsonb(metadata, document.source), counts.length, vector,
                     named)
                )  # fmt: skip
                posting_rows.extend(
                    (term, chunk.id, document.id, tf, counts.length)
                    for term, tf in counts.terms.items()
                )
            row = document_row(
                item,
                jsonb(document.metadata, document.source),
                jsonb(sections_json(document), document.source),
            )
            facts = write_fact_rows(item)
            named_headers = tuple((document.id, i, text) for i, text in headers.items())
            rows = _Rows(
                row, chunk_rows, posting_rows, tokens, facts, document.principals, named_headers
            )
            prepared.append(rows)
        return prepared

    def _write(
        self, conn: Connection[Any], ids: list[str], sources: list[str], rows: list[_Rows]
    ) -> None:
        conn.execute(_LOCK_KEYS, (ids + sources,))
        old = [
            r[0]
            for r in conn.execute(
                self._db.sql("SELECT id FROM {s}.documents WHERE id = ANY(%s) OR source = ANY(%s)"),
                (ids, sources),
            )
        ]
        removed_chunks = removed_tokens = 0
        graph_changed = bool(old) and had_facts(self._db, conn, old)
        if old:
            _, removed_chunks, removed_tokens = delete_documents(self._db, conn, old)
        copy_rows(self._db, conn, "documents", _DOCUMENT_COPY, [r.document for r in rows])
        write_readers(self._db, conn, [(str(r.document[0]), r.principals) for r in rows])
        write_headers(self._db, conn, [h for r in rows for h in r.headers])
        copy_rows(self._db, conn, "chunks", _CHUNK_COPY, [c for r in rows for c in r.chunks])
        copy_rows(self._db, conn, "postings", _POSTING_COPY, [p for r in rows for p in r.postings])
        facts = [(str(r.document[0]), f) for r in rows for f in _last_facts(r.facts)]
        copy_facts(conn, functools.partial(copy_rows, self._db), facts)
        added_chunks = sum(len(r.chunks) for r in rows)
        added_tokens = sum(r.tokens for r in rows)
        prune(self._db, conn)  # the change log's old rows, which caches replay no more
        move_counters(self._db, conn, added_chunks - removed_chunks, added_tokens - removed_tokens)
        if graph_changed or facts:
            bump_graph_version(self._db, conn)


def _last_of_each(batch: Sequence[DocumentWrite]) -> list[DocumentWrite]:
    """The documents that survive the batch: one replaced by a later document with its id or
    source is dropped (in batch order, as if written one by one)."""
    ids: set[str] = set()
    sources: set[str] = set()
    kept: list[DocumentWrite] = []
    for item in reversed(batch):
        if item.document.id not in ids and item.document.source not in sources:
            kept.append(item)
        ids.add(item.document.id)
        sources.add(item.document.source)
    return kept[::-1]


def _last_facts(facts: list[FactRows]) -> list[FactRows]:
    """One chunk's facts given twice in a write: the later replace the earlier."""
    return list({rows.chunk_id: rows for rows in facts}.values())


def _indexed_text(chunk: Chunk, metadata: dict[str, Any]) -> str:
    """What BM25 indexes (`Chunk.keyword_text`): the text after the header of the table it
    continues and the chunk's keyword header, exactly as the SQLite store's FTS5 trigger
    builds it from the merged metadata."""
    text = chunk.text
    for key in (TABLE_HEADER, KEYWORD_HEADER):
        header = metadata.get(key)
        text = f"{header}\n{text}" if isinstance(header, str) and header else text
    return text
