"""Chunks: by id, by document, by (document, index) position, and page by page for export."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.models import Chunk
from ragwright.stores.rows import chunk_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.rows import CHUNK_COLUMNS, IDS_PER_QUERY, PAIRS_PER_QUERY


class SQLiteChunks:
    """Reads of chunks (and their stored vectors) over one database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        for start in range(0, len(chunk_ids), IDS_PER_QUERY):  # bounded SQL variables
            batch = list(chunk_ids[start : start + IDS_PER_QUERY])
            marks = ", ".join("?" for _ in batch)
            rows = self._db.query(
                f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.id IN ({marks})", batch
            )
            found.update((row[0], chunk_from_row(row)) for row in rows)
        return found

    def chunks_of(self, document_id: str) -> list[Chunk]:
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? ORDER BY c.idx",
            (document_id,),
        )
        return [chunk_from_row(row) for row in rows]

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks in chunk-id order, starting after the id ``after``. Paging by
        key rather than by position: a page boundary never moves when documents change."""
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (after or "", max(0, limit)),
        )
        return [chunk_from_row(row) for row in rows]

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of these chunks, as written; unknown ids are absent."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(chunk_ids), IDS_PER_QUERY):
            batch = list(chunk_ids[start : start + IDS_PER_QUERY])
            marks = ", ".join("?" for _ in batch)
            rows = self._db.query(f"SELECT id, vector FROM chunks WHERE id IN ({marks})", batch)
            found.update((r[0], np.frombuffer(r[1], dtype="<f4").astype(np.float32)) for r in rows)
        return found

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        """Chunks by (document id, index); negative indices count from the end. Unknown
        pairs are absent from the result."""
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        with self._db.lock, self._db.read_snapshot():  # counts and rows from one state
            return self._chunks_at(wanted)

    def _chunks_at(self, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        document_ids = sorted({d for d, _ in wanted})
        counts: dict[str, int] = {}
        for start in range(0, len(document_ids), IDS_PER_QUERY):
            batch = document_ids[start : start + IDS_PER_QUERY]
            marks = ", ".join("?" for _ in batch)
            counts.update(
                self._db.query(
                    f"SELECT document_id, count(*) FROM chunks WHERE document_id IN ({marks}) "
                    "GROUP BY document_id",
                    batch,
                )
            )
        requested_as: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for document_id, index in wanted:
            count = counts.get(document_id, 0)
            absolute = index + count if index < 0 else index
            if 0 <= absolute < count:
                requested_as.setdefault((document_id, absolute), []).append((document_id, index))
        found: dict[tuple[str, int], Chunk] = {}
        pairs = list(requested_as)
        for start in range(0, len(pairs), PAIRS_PER_QUERY):  # SQLite caps expression depth
            some = pairs[start : start + PAIRS_PER_QUERY]
            where = " OR ".join("(c.document_id = ? AND c.idx = ?)" for _ in some)
            params = [value for pair in some for value in pair]
            rows = self._db.query(f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE {where}", params)
            for row in rows:
                for key in requested_as[(row[1], row[2])]:
                    found[key] = chunk_from_row(row)
        return found
