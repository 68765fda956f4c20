"""The sparse learned-term arm in SQLite: an inverted side table of (term, chunk, weight)
postings, searched in SQL by the inner product with the query's terms.

``sparse_chunks`` lists the chunks that have been encoded (a chunk may have no term at all),
``sparse_postings`` their non-zero weights, keyed by term for search and indexed by chunk for
deletes. Triggers drop a chunk's rows when the chunk is deleted (or its text changes), in the
writer's transaction, so no search ever scores a removed chunk. A query reads only the
postings of its own terms; the filter is applied in the same statement.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ragwright.filters import Filter
from ragwright.models import Arm, Hit, Scale
from ragwright.models.sparse import SparseVector
from ragwright.stores.rows import hit_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import condition_for
from ragwright.stores.sqlite.rows import CHUNK_COLUMNS


class SQLiteSparse:
    """`SparseSearch` and `SparseTermIndex` over the side tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def sparse_search(
        self, query: SparseVector, top_k: int, where: Filter | None = None
    ) -> list[Hit]:
        """Chunks by the inner product of their weights with ``query``'s, best first (ties by
        row), the filter applied in the same statement."""
        if top_k <= 0 or not len(query):
            return []
        pairs = zip(query.terms.tolist(), query.weights.tolist(), strict=True)
        terms = json.dumps([[int(t), float(w)] for t, w in pairs])
        condition, params = condition_for(where)
        join = "" if where is None else "JOIN chunks c ON c.rowid = p.chunk_rowid"
        ranked = (
            "WITH q AS (SELECT json_extract(value, '$[0]') AS term, "
            "json_extract(value, '$[1]') AS weight FROM json_each(?)) "
            "SELECT p.chunk_rowid AS chunk_rowid, SUM(p.weight * q.weight) AS score "
            f"FROM q JOIN sparse_postings p ON p.term = q.term {join} WHERE {condition} "
            "GROUP BY p.chunk_rowid ORDER BY score DESC, p.chunk_rowid LIMIT ?"
        )
        with self._db.lock, self._db.read_snapshot():
            rows = self._db.query(
                f"SELECT {CHUNK_COLUMNS}, s.score FROM ({ranked}) s "
                "JOIN chunks c ON c.rowid = s.chunk_rowid ORDER BY s.score DESC, c.rowid",
                [terms, *params, top_k],
            )
        return [
            hit_from_row(row, float(row[-1]), Scale.SPARSE, Arm.SPARSE, rank)
            for rank, row in enumerate(rows, start=1)
        ]

    def chunks_without_terms(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` chunks not encoded yet: (id, indexed text), in row order."""
        rows = self._db.query(
            "SELECT c.id, v.text FROM chunks c JOIN chunks_indexed v ON v.chunk_rowid = c.rowid "
            "WHERE NOT EXISTS (SELECT 1 FROM sparse_chunks s WHERE s.chunk_rowid = c.rowid) "
            "ORDER BY c.rowid LIMIT ?",
            [limit],
        )
        return [(str(row[0]), str(row[1])) for row in rows]

    def write_terms(self, rows: Sequence[tuple[str, SparseVector]]) -> None:
        """Each chunk's weights, replacing any it had, in one transaction; a chunk deleted
        since it was read is skipped."""
        with self._db.transaction() as db:
            for chunk_id, vector in rows:
                found = db.execute("SELECT rowid FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
                if found is None:
                    continue
                rowid = int(found[0])
                db.execute("DELETE FROM sparse_postings WHERE chunk_rowid = ?", (rowid,))
                db.execute("INSERT OR IGNORE INTO sparse_chunks(chunk_rowid) VALUES (?)", (rowid,))
                db.executemany(
                    "INSERT INTO sparse_postings(term, chunk_rowid, weight) VALUES (?, ?, ?)",
                    [
                        (int(t), rowid, float(w))
                        for t, w in zip(vector.terms, vector.weights, strict=True)
                    ],
                )

    def clear_terms(self) -> None:
        """Every chunk's weights gone (another model's are coming)."""
        with self._db.transaction() as db:
            db.execute("DELETE FROM sparse_postings")
            db.execute("DELETE FROM sparse_chunks")
