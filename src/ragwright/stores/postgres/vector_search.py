"""Vector search: cosine over ``vector(dim)``, exact while the candidates are few (a small
collection, or a filter matching at most ``exact_limit`` chunks, found first and ranked
exactly), through the HNSW index otherwise, with pgvector's iterative scan so that a filter
still fills the top k; similarity is ``1 - cosine distance``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from ragwright.filters import Filter
from ragwright.models import Arm, Hit, Scale
from ragwright.ports import Vectors
from ragwright.stores.checks import query_vector
from ragwright.stores.postgres.filters import FilterCompiler, Params
from ragwright.stores.postgres.rows import hits, ranked
from ragwright.stores.postgres.schema import HNSW_MAX_DIMENSION
from ragwright.stores.postgres.settings import PostgresSettings

if TYPE_CHECKING:
    from psycopg import Connection

_EXACT = (
    "SELECT c.id, coalesce(nullif(1 - (c.embedding <=> %s), 'NaN'), 0) AS score "
    "FROM {s}.chunks c WHERE {where} ORDER BY score DESC, c.id LIMIT %s"
)
_HNSW = (
    "SELECT h.id, 1 - h.distance AS score FROM (SELECT c.id, c.embedding <=> %s AS distance "
    "FROM {s}.chunks c WHERE {where} ORDER BY distance LIMIT %s) h"
)
_ZERO_QUERY = (
    "SELECT c.id, 0.0::float8 AS score FROM {s}.chunks c WHERE {where} ORDER BY c.id LIMIT %s"
)


@dataclass(frozen=True, slots=True)
class _VectorQuery:
    vector: npt.NDArray[np.float32]
    top_k: int
    condition: sql.Composable
    params: Params
    filtered: bool
    indexed: bool = True


class PostgresVectorSearch(PostgresSettings):
    _filters: FilterCompiler

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        """Cosine top-k: exact over the filter's matches when they are few (or the collection
        is small), else through the HNSW index with an iterative scan."""
        condition, params = self._filters.compile(where)  # refuses a bad filter first
        space = self.space
        if space is None or top_k <= 0:
            return []
        vector = query_vector(query, space)
        search = _VectorQuery(vector, top_k, condition, params, where is not None)
        if space.dimension > HNSW_MAX_DIMENSION:
            search = dataclasses.replace(search, indexed=False)

        def work(conn: Connection[Any]) -> list[Any]:
            self.check_space(conn, space)  # a reindex swap since the query was embedded
            return self._vector_rows(conn, search)

        rows = self._db.run(work, "vector search")
        return hits(rows, Scale.SIMILARITY, Arm.VECTOR)

    def _vector_rows(self, conn: Connection[Any], search: _VectorQuery) -> list[Any]:
        vector, top_k, condition, params = (
            search.vector,
            search.top_k,
            search.condition,
            search.params,
        )
        schema = self._db.identifier
        if not float(np.linalg.norm(vector)) > 0:  # no direction: every similarity is 0
            return conn.execute(ranked(schema, _ZERO_QUERY, condition), [*params, top_k]).fetchall()
        if search.indexed and not self._few_candidates(conn, search):
            ef_search = min(max(self._db.backend.hnsw_ef_search, top_k), 1000)
            conn.execute(
                f"SET LOCAL hnsw.ef_search = {ef_search}; "
                "SET LOCAL hnsw.iterative_scan = relaxed_order"
            )
            statement = ranked(schema, _HNSW, condition)
            rows = conn.execute(statement, [vector, *params, top_k]).fetchall()
            if len(rows) >= top_k:
                return rows
            # the index ran out before k rows passed the filter: rank the matches exactly
        statement = ranked(schema, _EXACT, condition)
        return conn.execute(statement, [vector, *params, top_k]).fetchall()

    def _few_candidates(self, conn: Connection[Any], search: _VectorQuery) -> bool:
        """Whether at most ``exact_limit`` chunks can be returned: then an exact ranking of
        them costs less than the index and is never wrong. Counts at most that many."""
        limit = self._db.backend.exact_limit
        if not search.filtered:
            row = conn.execute(
                self._db.sql("SELECT coalesce(sum(chunks), 0) FROM {s}.bm25_stats")
            ).fetchone()
        else:
            statement = sql.SQL(
                "SELECT count(*) FROM (SELECT 1 FROM {}.chunks c WHERE {} LIMIT %s) t"
            ).format(self._db.identifier, search.condition)
            row = conn.execute(statement, [*search.params, limit + 1]).fetchone()
        return row is not None and int(row[0]) <= limit
