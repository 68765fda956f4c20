"""The sparse learned-term arm in PostgreSQL: an inverted table of (term, chunk, weight)
postings, searched in SQL by the inner product with the query's terms (the SQLite store's
design, `ragwright.stores.sqlite.sparse`).

Postings rather than pgvector's ``sparsevec``: a query then reads only its own terms' postings
through the primary key, where ``sparsevec`` scores every row (its HNSW index takes at most
1,000 non-zero entries per vector). Both tables reference ``chunks`` with ``ON DELETE
CASCADE`` (and ``ON UPDATE CASCADE``: a moved document's chunks get new ids), so a chunk's
weights go in the transaction that deletes it. They are created with
the first weights written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragwright.filters import Filter
from ragwright.models import Arm, Hit, Scale
from ragwright.models.sparse import SparseVector
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.rows import hits, ranked
from ragwright.stores.postgres.table_headers import HEADER_TEXT

_DDL = (
    'CREATE TABLE IF NOT EXISTS {s}.sparse_chunks (chunk_id text COLLATE "C" PRIMARY KEY '
    "REFERENCES {s}.chunks(id) ON DELETE CASCADE ON UPDATE CASCADE); "
    "CREATE TABLE IF NOT EXISTS {s}.sparse_postings (term integer NOT NULL, "
    'chunk_id text COLLATE "C" NOT NULL REFERENCES {s}.sparse_chunks(chunk_id) '
    "ON DELETE CASCADE ON UPDATE CASCADE, weight real NOT NULL, "
    "PRIMARY KEY (term, chunk_id) INCLUDE (weight)); "
    "CREATE INDEX IF NOT EXISTS sparse_postings_chunk ON {s}.sparse_postings (chunk_id)"
)
_RANKING = (
    "SELECT p.chunk_id AS id, sum(p.weight * q.weight) AS score "
    "FROM unnest(%s::int[], %s::real[]) AS q(term, weight) "
    "JOIN {s}.sparse_postings p ON p.term = q.term JOIN {s}.chunks c ON c.id = p.chunk_id "
    "WHERE {where} GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
)


class PostgresSparse:
    """`SparseSearch` and `SparseTermIndex` over the postings tables."""

    def __init__(self, db: SchemaDatabase, filters: FilterCompiler) -> None:
        self._db = db
        self._filters = filters

    def sparse_search(
        self, query: SparseVector, top_k: int, where: Filter | None = None
    ) -> list[Hit]:
        """Chunks by the inner product of their weights with ``query``'s, best first."""
        condition, params = self._filters.compile(where)
        if top_k <= 0 or not len(query):
            return []
        statement = ranked(self._db.identifier, _RANKING, condition)
        arguments = [query.terms.tolist(), query.weights.tolist(), *params, top_k]
        rows = self._db.run(
            lambda conn: conn.execute(statement, arguments).fetchall(), "sparse search"
        )
        return hits(rows, Scale.SPARSE, Arm.SPARSE)

    def chunks_without_terms(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` chunks not encoded yet: (id, indexed text), by id."""

        def work(conn: Any) -> list[tuple[str, str]]:
            conn.execute(self._db.sql(_DDL))
            rows = conn.execute(
                self._db.sql(
                    f"SELECT c.id, CASE WHEN coalesce({HEADER_TEXT}, '') <> '' "
                    f"THEN ({HEADER_TEXT}) || chr(10) ELSE '' END || c.text "
                    "FROM {s}.chunks c WHERE NOT EXISTS (SELECT 1 FROM {s}.sparse_chunks s "
                    "WHERE s.chunk_id = c.id) ORDER BY c.id LIMIT %s"
                ),
                (limit,),
            ).fetchall()
            return [(str(row[0]), str(row[1])) for row in rows]

        return self._db.run(work, "reading chunks to encode")

    def write_terms(self, rows: Sequence[tuple[str, SparseVector]]) -> None:
        """Each chunk's weights, replacing any it had, in one transaction; a chunk deleted
        since it was read is skipped."""

        def work(conn: Any) -> None:
            conn.execute(self._db.sql(_DDL))
            ids = [chunk_id for chunk_id, _ in rows]
            conn.execute(
                self._db.sql("DELETE FROM {s}.sparse_chunks WHERE chunk_id = ANY(%s)"), (ids,)
            )
            present = {
                str(row[0])
                for row in conn.execute(
                    self._db.sql(
                        "INSERT INTO {s}.sparse_chunks (chunk_id) SELECT id FROM {s}.chunks "
                        "WHERE id = ANY(%s) RETURNING chunk_id"
                    ),
                    (ids,),
                ).fetchall()
            }
            postings = [
                (int(t), chunk_id, float(w))
                for chunk_id, vector in rows
                if chunk_id in present
                for t, w in zip(vector.terms.tolist(), vector.weights.tolist(), strict=True)
            ]
            with conn.cursor() as cursor:
                cursor.executemany(
                    self._db.sql(
                        "INSERT INTO {s}.sparse_postings (term, chunk_id, weight) "
                        "VALUES (%s, %s, %s)"
                    ),
                    postings,
                )

        self._db.run(work, "writing sparse term weights")

    def clear_terms(self) -> None:
        """Every chunk's weights gone (another model's are coming)."""

        def work(conn: Any) -> None:
            conn.execute(self._db.sql(_DDL))
            conn.execute(self._db.sql("DELETE FROM {s}.sparse_chunks"))

        self._db.run(work, "clearing sparse term weights")
