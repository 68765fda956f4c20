"""Rankings whose hits lack only their sources, and the sources of the hits that survive.

A hybrid search ranks ``depth`` candidates in each arm, fuses them, reorders them by the
question's words (the passage-first step, which reads every candidate's text) and keeps
``top_k``. So an arm's ranking reads each candidate's chunk row once, by row id, inside its
read snapshot (the row's page is read anyway to find the chunk's id); the document's source,
another table's page per row, is read by `with_rows` for the kept hits alone. Reading every
candidate's whole row again by chunk id, with its source, after fusion was a sixth of a
SciFact hybrid call (33 rows, 0.5-0.65 ms of 3.8).

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
from ragwright.stores.sqlite.rows import CHUNKS_WITH_SOURCE, IDS_PER_QUERY, JOINED_CHUNK_COLUMNS

#: How an arm turns its (row id, score) ranking into hits, inside its read snapshot.
RowReader = Callable[[list[tuple[int, float]], Scale, Arm], list[Hit]]
#: `read_chunks` or `read_ids`: the chunks of rows by row id, added to those already read.
ChunkReader = Callable[[Database, Sequence[int], dict[int, Chunk]], dict[int, Chunk]]

#: The columns `chunk_from_row` reads, then the row id (no source: see the module's text).
_RANKED_COLUMNS = "id, document_id, idx, text, char_start, char_end, metadata, rowid"
_RANKED_ROWID = 7


def ranked_hits(db: Database, scored: list[tuple[int, float]], scale: Scale, arm: Arm) -> list[Hit]:
    """Hits of ``scored`` with their chunks but no source (ranked from 1, as the whole hits
    of `hit_from_row` are; a row deleted since the ranking is dropped)."""
    return hits_of(scored, scale, arm, read_chunks(db, [rowid for rowid, _ in scored], {}))


def read_chunks(db: Database, rowids: Sequence[int], chunks: dict[int, Chunk]) -> dict[int, Chunk]:
    """``chunks`` (by row id) with the chunks of ``rowids`` it lacks read and added (a row
    deleted is left out): a row in several rankings is read, and its chunk made, once."""
    for rows in _rows(db, _RANKED_COLUMNS, rowids, chunks):
        chunks.update((row[_RANKED_ROWID], chunk_from_row(row)) for row in rows)
    return chunks


def read_ids(db: Database, rowids: Sequence[int], chunks: dict[int, Chunk]) -> dict[int, Chunk]:
    """`read_chunks`, each chunk holding only its id and its document's (what fusion orders,
    groups by document and breaks ties by): for rankings whose text nobody reads."""
    for rows in _rows(db, "rowid, id, document_id", rowids, chunks):
        chunks.update((row[0], Chunk(row[1], row[2], 0, "", 0, 0)) for row in rows)
    return chunks


def _rows(
    db: Database, columns: str, rowids: Sequence[int], read: dict[int, Chunk]
) -> Iterator[list[Any]]:
    """Batches of the rows of ``rowids`` not in ``read`` yet, with these columns."""
    missing = [rowid for rowid in dict.fromkeys(rowids) if rowid not in read]
    return _batches(db, f"SELECT {columns} FROM chunks WHERE rowid IN ({{marks}})", missing)


def _batches(db: Database, sql: str, keys: Sequence[Any]) -> Iterator[list[Any]]:
    """The rows of ``sql`` (whose ``{marks}`` stands for ``keys``' placeholders), for
    `IDS_PER_QUERY` keys at a time (SQLite bounds a statement's variables)."""
    for start in range(0, len(keys), IDS_PER_QUERY):
        batch = keys[start : start + IDS_PER_QUERY]
        yield db.query(sql.format(marks=", ".join("?" for _ in batch)), batch)


def hits_of(
    scored: list[tuple[int, float]], scale: Scale, arm: Arm, chunks: dict[int, Chunk]
) -> list[Hit]:
    """The hits of ``scored`` whose chunks ``chunks`` holds, ranked from 1."""
    arms = frozenset({arm})
    return [
        Hit(
            chunk=chunk,
            score=score,
            scale=scale,
            arms=arms,
            arm_ranks=MappingProxyType({arm: rank}),
        )
        for rank, (rowid, score) in enumerate(scored, start=1)
        if (chunk := chunks.get(rowid)) is not None
    ]


def with_rows(db: Database, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with their sources read, in order; a hit whose chunk is gone (or replaced:
    chunk ids are content-addressed) since it was ranked is dropped."""
    if not hits:
        return []
    ids = list(dict.fromkeys(hit.chunk.id for hit in hits))
    sql = (
        "SELECT c.id, d.source FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.id IN ({marks})"
    )
    sources: dict[str, str] = {}
    for rows in _batches(db, sql, ids):
        sources.update(rows)
    return [
        copied_hit(hit, score=hit.score, scale=hit.scale, source=source)
        for hit in hits
        if (source := sources.get(hit.chunk.id)) is not None
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
