"""The rows of ranked hits, read inside the ranking's read snapshot, each once.

A hybrid search ranks ``depth`` candidates in each arm, fuses them, reorders them by the
question's words (the passage-first step, which reads every candidate's text) and keeps
``top_k``. So `hybrid` rankings read each candidate's whole row once, by row id, with its
document's source (a join: SciFact's 33 candidate rows in 0.145 ms with their sources against
0.164 without, so reading the sources of the kept hits afterwards, a second statement outside
the snapshot at 0.13 ms a call, only cost time).

Without the passage-first step nothing reads a candidate's text before the top_k is cut, so
`read_ids` gives the rankings chunks holding only their ids and `with_chunks` reads the whole
rows of the kept hits (SciFact, that search: 3.57 ms against 3.81 with every candidate's row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from types import MappingProxyType
from typing import Any

from ragwright.models import Arm, Chunk, Hit, Scale, copied_hit
from ragwright.stores.rows import SOURCE, chunk_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.rows import (
    CHUNKS_WITH_SOURCE,
    IDS_PER_QUERY,
    JOINED_CHUNK_COLUMNS,
    ROWID,
)

#: A ranked row's chunk and its document's source ("" until `with_chunks` reads it).
Row = tuple[Chunk, str]
#: `read_chunks` or `read_ids`: the rows of row ids, added to those already read.
ChunkReader = Callable[[Database, Sequence[int], dict[int, Row]], dict[int, Row]]


def read_chunks(db: Database, rowids: Sequence[int], read: dict[int, Row]) -> dict[int, Row]:
    """``read`` (by row id) with the whole rows of ``rowids`` it lacks read and added (a row
    deleted is left out): a row in several rankings is read, and its chunk made, once."""
    sql = f"SELECT {JOINED_CHUNK_COLUMNS} FROM {CHUNKS_WITH_SOURCE} WHERE c.rowid IN ({{marks}})"
    for rows in _batches(db, sql, _missing(rowids, read)):
        read.update((row[ROWID], (chunk_from_row(row), row[SOURCE])) for row in rows)
    return read


def read_ids(db: Database, rowids: Sequence[int], read: dict[int, Row]) -> dict[int, Row]:
    """`read_chunks`, each chunk holding only its id and its document's (what fusion orders,
    groups by document and breaks ties by), and no source: for rankings whose text nobody
    reads."""
    sql = "SELECT rowid, id, document_id FROM chunks WHERE rowid IN ({marks})"
    for rows in _batches(db, sql, _missing(rowids, read)):
        read.update((row[0], (Chunk(row[1], row[2], 0, "", 0, 0), "")) for row in rows)
    return read


def _missing(rowids: Sequence[int], read: dict[int, Row]) -> list[int]:
    return [rowid for rowid in dict.fromkeys(rowids) if rowid not in read]


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
