"""Ranked rows read as whole hits, as candidates by their ids alone, and as the whole hits of
the few a hybrid search keeps.

A hybrid search ranks ``depth`` candidates in each arm (~33 distinct on SciFact), fuses them,
reorders them by the question's words (the passage-first step) and keeps ``top_k``. Its
candidates' ids and words come from the candidate rows cache (`candidate_rows`), or from the
rows here while that is built (`read_candidates`), and `kept_chunks` reads the whole
chunks, with their sources, of the hits kept. Reading every candidate's whole row and its
metadata, and building a `Hit` for each, was a third of a SciFact hybrid call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ragwright.models import Arm, Candidate, Chunk, Hit, Scale
from ragwright.stores.rows import SOURCE, chunk_from_row
from ragwright.stores.sqlite.database import GENERATION, Database, generation_of
from ragwright.stores.sqlite.rows import (
    CHUNK_TEXT_COLUMNS,
    CHUNKS_WITH_SOURCE,
    IDS_PER_QUERY,
    JOINED_CHUNK_COLUMNS,
    ROWID,
)
from ragwright.terms import holders_in, passage_text

#: A ranked row's chunk and its document's source.
Row = tuple[Chunk, str]
#: Whole rows with their sources, by row id and by chunk id (``{marks}``: the keys' marks).
_WHOLE = f"SELECT {JOINED_CHUNK_COLUMNS} FROM {CHUNKS_WITH_SOURCE} WHERE "
_WHOLE_BY_ROWID = _WHOLE + "c.rowid IN ({marks})"
_WHOLE_BY_ID = _WHOLE + "c.id IN ({marks})"
#: `_WHOLE_BY_ROWID` with the write generation after the columns (its own snapshot's).
_WHOLE_AT = (
    f"SELECT {JOINED_CHUNK_COLUMNS}, ({GENERATION}) FROM {CHUNKS_WITH_SOURCE} "
    "WHERE c.rowid IN ({marks})"
)


def read_chunks(db: Database, rowids: Sequence[int]) -> dict[int, Row]:
    """The whole rows of ``rowids``, by row id (a row deleted is left out)."""
    read: dict[int, Row] = {}
    for rows in _batches(db, _WHOLE_BY_ROWID, rowids):
        read.update((row[ROWID], (chunk_from_row(row), row[SOURCE])) for row in rows)
    return read


def read_chunks_at(db: Database, rowids: Sequence[int], generation: int) -> dict[int, Row] | None:
    """`read_chunks` in one statement, outside any read snapshot: None unless that statement
    saw write generation ``generation`` (so the rows are those of the state ranked then), and
    for more rows than one statement takes, or none found."""
    if not rowids or len(rowids) > IDS_PER_QUERY:
        return None
    rows = db.query(_WHOLE_AT.format(marks=", ".join("?" for _ in rowids)), rowids)
    if not rows:
        return None
    seen = rows[0][-1]  # NULL: no write yet, generation 0
    if generation_of(db.path, None if seen is None else (seen,)) != generation:
        return None
    return {row[ROWID]: (chunk_from_row(row), row[SOURCE]) for row in rows}


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


def read_candidates(
    db: Database, rowids: Sequence[int], question: set[str]
) -> tuple[dict[int, tuple[str, str]], dict[str, list[str]]]:
    """Each row's (chunk id, document id) by row id, and the chunk ids of the rows whose
    passage text holds each ``question`` word, from the rows themselves in one statement
    (their texts only when there is a question); a row deleted is left out.
    `CandidateRows.read` answers the same from the cache."""
    columns = CHUNK_TEXT_COLUMNS if question else "id, document_id, rowid"
    sql = f"SELECT {columns} FROM chunks WHERE rowid IN ({{marks}})"
    rows = [row for batch in _batches(db, sql, rowids) for row in batch]
    ids = {row[-1]: (row[0], row[1]) for row in rows}
    texts = [passage_text(chunk_from_row(row)) for row in rows] if question else []
    found = holders_in(question, texts)
    return ids, {word: [rows[at][0] for at in positions] for word, positions in found.items()}


def _batches(db: Database, sql: str, keys: Sequence[Any]) -> Iterator[list[Any]]:
    """The rows of ``sql`` (whose ``{marks}`` stands for ``keys``' placeholders), for
    `IDS_PER_QUERY` keys at a time (SQLite bounds a statement's variables)."""
    for start in range(0, len(keys), IDS_PER_QUERY):
        batch = keys[start : start + IDS_PER_QUERY]
        yield db.query(sql.format(marks=", ".join("?" for _ in batch)), batch)


def hits_of(
    scored: list[tuple[int, float]], scale: Scale, arm: Arm, rows: dict[int, Row]
) -> list[Hit]:
    """The hits of ``scored`` whose rows ``rows`` holds, ranked from 1 (``rank`` too: a
    search of one arm returns them as they are, rather than copying each to rank it)."""
    arms = frozenset({arm})
    return [
        Hit(
            chunk=row[0],
            score=score,
            scale=scale,
            arms=arms,
            source=row[1],
            arm_ranks=MappingProxyType({arm: rank}),
            rank=rank,
        )
        for rank, (rowid, score) in enumerate(scored, start=1)
        if (row := rows.get(rowid)) is not None
    ]


def kept_chunks(
    db: Database, chunk_ids: Sequence[str], rowids: Mapping[str, int] | None = None
) -> dict[str, Row]:
    """The whole chunk and source of each of ``chunk_ids``, by chunk id; a chunk gone (or
    replaced: chunk ids are content-addressed) since it was ranked is left out. ``rowids``
    (chunk id → row id, as ranked) reads by row id, a B-tree lookup less per row (ten SciFact
    rows in 0.073 ms against 0.102 by chunk id, ad hoc); a row since deleted, or reused by
    another chunk, is looked up by chunk id after all."""
    rows: dict[str, Sequence[Any]] = {}
    if rowids:
        keys = [rowids[i] for i in chunk_ids if i in rowids]
        for batch in _batches(db, _WHOLE_BY_ROWID, keys):
            rows.update((row[0], row) for row in batch)
    missing = [i for i in chunk_ids if i not in rows]
    for batch in _batches(db, _WHOLE_BY_ID, missing):
        rows.update((row[0], row) for row in batch)
    return {i: (chunk_from_row(row), row[SOURCE]) for i in chunk_ids if (row := rows.get(i))}
