"""Chunks: by id, by document, by (document, index) position, and page by page for export;
each call is one statement, so it reads one snapshot."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.models import Chunk, EmbeddingSpace
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.rows import CHUNK_COLUMNS
from ragwright.stores.rows import chunk_from_row

#: Chunks with their document's source; a condition on ``c`` follows.
_CHUNKS = (
    f"SELECT {CHUNK_COLUMNS} FROM {{s}}.chunks c JOIN {{s}}.documents d ON d.id = c.document_id "
)
#: Pairs are matched as pairs: negative indices count from the end of their document.
_AT = (
    "WITH wanted AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS w(document_id, idx)), "
    "counts AS (SELECT c.document_id, count(*) AS n FROM {s}.chunks c "
    "  WHERE c.document_id IN (SELECT document_id FROM wanted) GROUP BY c.document_id) "
    f"SELECT w.document_id, w.idx, {CHUNK_COLUMNS} FROM wanted w "
    "JOIN counts n ON n.document_id = w.document_id "
    "JOIN {s}.chunks c ON c.document_id = w.document_id "
    "  AND c.idx = CASE WHEN w.idx < 0 THEN w.idx + n.n ELSE w.idx END "
    "JOIN {s}.documents d ON d.id = c.document_id"
)


class PostgresChunks:
    """Reads of chunks (and their stored vectors) in one collection's schema. ``space`` gives
    the recorded embedding space (the settings' `space`): no vectors are read before one."""

    def __init__(self, db: SchemaDatabase, space: Callable[[], EmbeddingSpace | None]) -> None:
        self._db = db
        self._space = space

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        rows = self._db.query(_CHUNKS + "WHERE c.id = ANY(%s)", (list(dict.fromkeys(chunk_ids)),))
        return {row[0]: chunk_from_row(row) for row in rows}

    def chunks_of(self, document_id: str) -> list[Chunk]:
        rows = self._db.query(_CHUNKS + "WHERE c.document_id = %s ORDER BY c.idx", (document_id,))
        return [chunk_from_row(row) for row in rows]

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks in chunk-id order, starting after the id ``after`` (paging
        by key: a page boundary never moves when documents change)."""
        rows = self._db.query(
            _CHUNKS + "WHERE c.id > %s ORDER BY c.id LIMIT %s", (after or "", max(0, limit))
        )
        return [chunk_from_row(row) for row in rows]

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of these chunks; unknown ids are absent."""
        if self._space() is None:
            return {}
        rows = self._db.query(
            "SELECT id, embedding FROM {s}.chunks WHERE id = ANY(%s)",
            (list(dict.fromkeys(chunk_ids)),),
        )
        return {r[0]: np.array(r[1].to_numpy(), dtype=np.float32) for r in rows}

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        """Chunks by (document id, index); negative indices count from the end. Unknown pairs
        are absent. The pairs are matched as pairs in one statement (one snapshot)."""
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        rows = self._db.query(_AT, ([d for d, _ in wanted], [i for _, i in wanted]))
        return {(row[0], row[1]): chunk_from_row(row[2:]) for row in rows}
