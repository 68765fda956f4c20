"""Ranked rows read as whole hits, as candidates by their ids alone, and as the whole hits of
the few a hybrid search keeps.

A hybrid search ranks ``depth`` candidates in each arm (~33 distinct on SciFact), fuses them,
reorders them by the question's words (the passage-first step) and keeps ``top_k``. Its
rankings read each candidate's chunk and document ids alone (`read_ids`), the question words
come from the word postings (`passage_words`), and `with_chunks` reads the whole rows, with
their sources, of the hits kept. Reading every candidate's whole row and its metadata, and
building a `Hit` for each, was a third of a SciFact hybrid call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import MappingProxyType
from typing import Any

from ragwright.models import Arm, Candidate, Chunk, Hit, Scale, copied_hit
from ragwright.stores.rows import SOURCE, chunk_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.rows import (
    CHUNKS_WITH_SOURCE,
    IDS_PER_QUERY,
    JOINED_CHUNK_COLUMNS,
    ROWID,
)
from ragwright.terms import held_by_each, passage_text

#: A ranked row's chunk and its document's source.
Row = tuple[Chunk, str]


def read_chunks(db: Database, rowids: Sequence[int]) -> dict[int, Row]:
    """The whole rows of ``rowids``, by row id (a row deleted is left out)."""
    sql = f"SELECT {JOINED_CHUNK_COLUMNS} FROM {CHUNKS_WITH_SOURCE} WHERE c.rowid IN ({{marks}})"
    read: dict[int, Row] = {}
    for rows in _batches(db, sql, rowids):
        read.update((row[ROWID], (chunk_from_row(row), row[SOURCE])) for row in rows)
    return read


def read_ids(db: Database, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Each row's (chunk id, document id), by row id (a row deleted is left out)."""
    sql = "SELECT rowid, id, document_id FROM chunks WHERE rowid IN ({marks})"
    ids: dict[int, tuple[str, str]] = {}
    for rows in _batches(db, sql, rowids):
        ids.update((row[0], (row[1], row[2])) for row in rows)
    return ids


def candidates_of(
    scored: list[tuple[int, float]], arm: Arm, ids: dict[int, tuple[str, str]]
) -> list[Candidate]:
    """The candidates of ``scored`` whose rows ``ids`` holds, in order."""
    arms = (arm,)
    return [
        Candidate(found[0], found[1], score, arms)
        for rowid, score in scored
        if (found := ids.get(rowid)) is not None
    ]


def held_in_texts(db: Database, question: set[str], rowids: Sequence[int]) -> dict[int, set[str]]:
    """The question words each row's passage text holds, matched in the texts themselves."""
    sql = "SELECT id, document_id, idx, text, char_start, char_end, metadata, rowid FROM chunks "
    rows = [
        row for batch in _batches(db, sql + "WHERE rowid IN ({marks})", rowids) for row in batch
    ]
    found = held_by_each(question, [passage_text(chunk_from_row(row)) for row in rows])
    return {row[7]: words for row, words in zip(rows, found, strict=True)}


def _batches(db: Database, sql: str, keys: Sequence[Any]) -> Iterator[list[Any]]:
    """The rows of ``sql`` (whose ``{marks}`` stands for ``keys``' placeholders), for
    `IDS_PER_QUERY` keys at a time (SQLite bounds a statement's variables)."""
    for start in range(0, len(keys), IDS_PER_QUERY):
        batch = keys[start : start + IDS_PER_QUERY]
        yield db.query(sql.format(marks=", ".join("?" for _ in batch)), batch)


def hits_of(
    scored: list[tuple[int, float]], scale: Scale, arm: Arm, rows: dict[int, Row]
) -> list[Hit]:
    """The hits of ``scored`` whose rows ``rows`` holds, ranked from 1."""
    arms = frozenset({arm})
    return [
        Hit(
            chunk=row[0],
            score=score,
            scale=scale,
            arms=arms,
            source=row[1],
            arm_ranks=MappingProxyType({arm: rank}),
        )
        for rank, (rowid, score) in enumerate(scored, start=1)
        if (row := rows.get(rowid)) is not None
    ]


def with_chunks(db: Database, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with their whole chunks and sources read, in order; a hit whose chunk is gone
    (or replaced: chunk ids are content-addressed) since it was ranked is dropped."""
    ids = list(dict.fromkeys(hit.chunk.id for hit in hits))
    sql = f"SELECT {JOINED_CHUNK_COLUMNS} FROM {CHUNKS_WITH_SOURCE} WHERE c.id IN ({{marks}})"
    rows: dict[str, Sequence[Any]] = {}
    for batch in _batches(db, sql, ids):
        rows.update((row[0], row) for row in batch)
    return [
        copied_hit(
            hit, score=hit.score, scale=hit.scale, source=row[SOURCE], chunk=chunk_from_row(row)
        )
        for hit in hits
        if (row := rows.get(hit.chunk.id)) is not None
    ]
