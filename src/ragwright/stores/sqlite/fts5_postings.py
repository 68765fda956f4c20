"""A `KeywordMatrix` read from an FTS5 index: its rows' lengths from ``<table>_docsize`` and its
postings through ``fts5vocab``, term by term as doc id lists that SQLite joins into text (one
Python string per term, parsed by numpy: no object per posting)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.stores.keyword_matrix import KeywordMatrix, Postings
from ragwright.stores.row_slots import RowIds, RowSlots

#: Terms read per batch while building (bounds the memory of one batch's doc id text).
_TERMS_PER_BATCH = 2000


def load(
    db: sqlite3.Connection,
    schema: str = "main",
    table: str = "chunks_fts",
    terms: Sequence[str] | None = None,
) -> KeywordMatrix:
    """Read the FTS5 index ``schema.table`` (call inside one read transaction); with
    ``terms``, the postings of those terms only (every row's length all the same)."""
    rowids, lengths = _row_lengths(db, schema, table)
    segment = _postings(db, schema, table, rowids, terms)
    return KeywordMatrix(RowSlots.of(rowids), lengths, (segment,), int(lengths.sum()))


def _row_lengths(
    db: sqlite3.Connection, schema: str, table: str
) -> tuple[RowIds, npt.NDArray[np.int32]]:
    sizes = db.execute(f"SELECT id, sz FROM {schema}.{table}_docsize ORDER BY id").fetchall()
    rowids = np.fromiter((r[0] for r in sizes), dtype=np.int64, count=len(sizes))
    lengths = np.fromiter((_varint(r[1]) for r in sizes), dtype=np.int32, count=len(sizes))
    return rowids, lengths


def _postings(
    db: sqlite3.Connection,
    schema: str,
    table: str,
    rowids: RowIds,
    only: Sequence[str] | None = None,
) -> Postings:
    """The postings of an FTS5 index (of the terms ``only`` when given)."""
    vocabulary = f"{table}_instances"
    db.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocabulary} "
        f"USING fts5vocab({schema}, {table}, instance)"
    )
    terms: list[bytes] = []
    term_ids, slot_parts, counts = [], [], []
    for batch in _term_batches(db, vocabulary, only):
        first = len(terms)
        terms += [term.encode() for term, _ in batch]
        parsed = [np.fromstring(text, dtype=np.int64, sep=",") for _, text in batch]
        sizes = np.fromiter((p.size for p in parsed), dtype=np.int64, count=len(parsed))
        instance_term = np.repeat(np.arange(first, len(terms), dtype=np.int32), sizes)
        instance_doc = np.concatenate(parsed)
        # Instances come in (term, doc) order: a run of one (term, doc) is one posting.
        starts = np.flatnonzero(
            np.concatenate([[True], (np.diff(instance_doc) != 0) | (np.diff(instance_term) != 0)])
        )
        term_ids.append(instance_term[starts])
        slot_parts.append(np.searchsorted(rowids, instance_doc[starts]).astype(np.int32))
        counts.append(np.diff(np.append(starts, instance_doc.size)).astype(np.int32))
    term_id = np.concatenate(term_ids) if term_ids else np.empty(0, dtype=np.int32)
    slots = np.concatenate(slot_parts) if slot_parts else np.empty(0, dtype=np.int32)
    tf = np.concatenate(counts) if counts else np.empty(0, dtype=np.int32)
    del term_ids, slot_parts, counts
    return Postings.gathered(terms, term_id, slots, tf)


def _term_batches(
    db: sqlite3.Connection, vocabulary: str, only: Sequence[str] | None
) -> Iterator[list[tuple[str, str]]]:
    chosen, params = "", list(only or ())
    if only is not None:
        chosen = f"WHERE term IN ({', '.join('?' for _ in params)}) " if params else "WHERE 0 "
    cursor = db.execute(
        f"SELECT term, group_concat(doc) FROM temp.{vocabulary} {chosen}"
        "GROUP BY term ORDER BY term",
        params,
    )
    while batch := cursor.fetchmany(_TERMS_PER_BATCH):
        yield batch


def _varint(blob: bytes) -> int:
    """The first SQLite varint of an FTS5 docsize record: the row's token count."""
    value = 0
    for i, byte in enumerate(blob[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value
