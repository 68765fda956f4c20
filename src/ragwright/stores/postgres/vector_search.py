"""Vector search: cosine over ``vector(dim)``, exact while the candidates are few (a small
collection, or a filter matching at most ``exact_limit`` chunks, found first and ranked
exactly), through the HNSW index otherwise, with pgvector's iterative scan so that a filter
still fills the top k; similarity is ``1 - cosine distance``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from ragwright.filters import Filter
from ragwright.models import Arm, EmbeddingSpace, Hit, Scale
from ragwright.ports import Vectors
from ragwright.stores.checks import query_vector
from ragwright.stores.postgres.filter_matches import FilterMatches, Matches
from ragwright.stores.postgres.filters import FilterCompiler, Params
from ragwright.stores.postgres.rows import SCORE, SNAPSHOT, hits, in_order, ranked, rows_of
from ragwright.stores.postgres.schema import HNSW_MAX_DIMENSION
from ragwright.stores.postgres.settings import PostgresSettings
from ragwright.stores.postgres.vector_cache import VectorCache
from ragwright.stores.postgres.vector_plan import (
    VectorRanking,
    chosen_ranking,
    exact_ranking,
    indexed_ranking,
)

if TYPE_CHECKING:
    from psycopg import Connection, Cursor

    from ragwright.stores.postgres.connections import Connections

_ZERO_QUERY = (
    "SELECT c.id, 0.0::float8 AS score FROM {s}.chunks c WHERE {where} ORDER BY c.id LIMIT %s"
)
#: The index's settings for this transaction: one statement, so it can go in a pipeline. No
#: parallel workers: the planner gives the exact arm a Gather, and its workers were started
#: even when the count gated that arm off (40 ms of a 50 ms search through the index).
INDEX_SETTINGS = (
    "SELECT set_config('hnsw.ef_search', %s, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('max_parallel_workers_per_gather', '0', true)"
)


@dataclass(frozen=True, slots=True)
class VectorQuery:
    vector: npt.NDArray[np.float32]
    top_k: int
    condition: sql.Composable
    params: Params
    filtered: bool
    indexed: bool = True
    where: Filter | None = None


class PostgresVectorSearch(PostgresSettings):
    _filters: FilterCompiler
    _vector_cache: VectorCache | None
    _filter_matches: FilterMatches

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        """Cosine top-k: exact over the filter's matches when they are few (or the collection
        is small), else through the HNSW index with an iterative scan."""
        asked = self._vector_query(query, top_k, where)
        if asked is None:
            return []
        space, search = asked
        if self.cached_filter(search) is not None:
            rows = self._db.read(
                lambda conn: self._cached_vector_rows(conn, space, search), "vector search"
            )
        else:
            rows = self._db.read(
                lambda conn: self._vector_rows(conn, space, search), "vector search"
            )
        return hits(rows, Scale.SIMILARITY, Arm.VECTOR)

    def cached_filter(self, search: VectorQuery) -> VectorCache | None:
        """The vector cache, when ``search`` ranks a filter's matches from it: a filtered
        search of a query with a direction (a zero query ranks every match 0, by chunk id:
        `vector_ranking`)."""
        cache = self._vector_cache
        if cache is None or search.where is None:
            return None
        return cache if float(np.linalg.norm(search.vector)) > 0 else None

    def _cached_vector_rows(
        self, conn: Connection[Any], space: EmbeddingSpace, search: VectorQuery
    ) -> list[Any]:
        """A filtered search ranked from the vector cache, in one snapshot: the filter's
        matches (one round trip, with the space check), their vectors not cached yet (one
        more, while any are missing), then their best rows."""
        with self.space_checked(conn, space, SNAPSHOT):
            matches = self.filter_matches(conn, search)
            arm = self.cached_vector_arm(conn, search, matches)
            conn.execute("COMMIT")
        return self.cached_vector_rows(conn, space, search, arm)

    def filter_matches(self, conn: Connection[Any], search: VectorQuery) -> Matches:
        """``search``'s filter's matches in ``conn``'s snapshot (at most ``exact_limit``)."""
        assert search.where is not None
        limit = self._db.backend.exact_limit
        return self._filter_matches.matches(
            conn, search.where, search.condition, search.params, limit
        )

    def cached_vector_arm(
        self, conn: Connection[Any], search: VectorQuery, matches: Matches
    ) -> tuple[Cursor[Any], list[tuple[int, float]] | None]:
        """The cursor of the vector arm's rows for ``matches`` (sent, not read) and its
        (row id, score) ranking: from the cache when the matches are few, else None and the
        rows through the HNSW index."""
        cache = self.cached_filter(search)
        assert cache is not None
        if matches.row_ids is None:
            ranking = indexed_ranking(search.params, search.vector, search.top_k)
            return self.ranked_cursor(conn, search, ranking), None
        scored = cache.ranked(conn, matches, search.vector, search.top_k)
        return conn.execute(rows_of(self._db.identifier, scored)), scored

    def cached_vector_rows(
        self,
        conn: Connection[Any],
        space: EmbeddingSpace,
        search: VectorQuery,
        arm: tuple[Cursor[Any], list[tuple[int, float]] | None],
    ) -> list[Any]:
        """The ranked rows of `cached_vector_arm`'s ``arm``, its transaction committed: ties
        in chunk-id order, as SQL orders them."""
        cursor, scored = arm
        if scored is None:
            return self._filled(conn, space, search, cursor.fetchall())
        rows = in_order(cursor.fetchall(), scored)
        return sorted(rows, key=lambda row: (-row[SCORE], row[0]))[: search.top_k]

    def _vector_query(
        self, query: Vectors, top_k: int, where: Filter | None
    ) -> tuple[EmbeddingSpace, VectorQuery] | None:
        """The space and what a search of ``query`` runs (None: nothing to search); a bad
        filter is refused first."""
        condition, params = self._filters.compile(where)
        space = self.space
        if space is None or top_k <= 0:
            return None
        vector = query_vector(query, space)
        indexed = space.dimension <= HNSW_MAX_DIMENSION
        filtered = where is not None
        return space, VectorQuery(vector, top_k, condition, params, filtered, indexed, where)

    def _vector_rows(
        self, conn: Connection[Any], space: EmbeddingSpace, search: VectorQuery
    ) -> list[Any]:
        """The ranked rows of ``search``, in one transaction of one round trip: the space
        check (`check_space`), the index settings and the ranking pipelined; a second
        transaction only when the index ran out before k rows passed the filter."""
        rows = self._pipelined(conn, space, search, vector_ranking(search, self._db.backend))
        return self._filled(conn, space, search, rows)

    def _filled(
        self, conn: Connection[Any], space: EmbeddingSpace, search: VectorQuery, rows: list[Any]
    ) -> list[Any]:
        """``rows``, or, when the index ran out before k rows passed the filter, the filter's
        matches ranked exactly."""
        if len(rows) >= search.top_k or not (search.filtered and search.indexed):
            return rows
        exact = exact_ranking(search.params, search.vector, search.top_k)
        return self._pipelined(conn, space, search, exact)

    def _pipelined(
        self,
        conn: Connection[Any],
        space: EmbeddingSpace,
        search: VectorQuery,
        ranking: VectorRanking,
    ) -> list[Any]:
        """The rows of ``ranking`` in a transaction of its own, sent in one message with the
        space check and the index settings."""
        # The space checked: a reindex swap since the query was embedded is told, not ranked.
        with self.space_checked(conn, space, "BEGIN READ ONLY"):
            cursor = self.ranked_cursor(conn, search, ranking)
            conn.execute("COMMIT")
        return cursor.fetchall()

    def ranked_cursor(
        self, conn: Connection[Any], search: VectorQuery, ranking: VectorRanking
    ) -> Cursor[Any]:
        """The index settings for ``search`` and its ranked rows (in a pipeline: not yet
        read)."""
        ef_search = min(max(self._db.backend.hnsw_ef_search * _widened(search), search.top_k), 1000)
        conn.execute(INDEX_SETTINGS, (str(ef_search),))
        schema = self._db.identifier
        statement = ranked(schema, ranking.ranking, search.condition, before=ranking.before)
        return conn.execute(statement, ranking.params)


def _widened(search: VectorQuery) -> int:
    """How many times ``hnsw_ef_search`` a search through the index reads: 3 with a filter.
    An iterative scan drops the candidates the filter refuses, and at 100k a 1%-filtered scan
    at ef_search 100 found 0.77 of the true top 10 (300: 1.000)."""
    return 3 if search.filtered else 1


def vector_ranking(search: VectorQuery, backend: Connections) -> VectorRanking:
    """The ranking a search runs: exact or through the index, chosen in the statement."""
    if not float(np.linalg.norm(search.vector)) > 0:  # no direction: every similarity is 0
        return VectorRanking("", _ZERO_QUERY, [*search.params, search.top_k])
    if not search.indexed:
        return exact_ranking(search.params, search.vector, search.top_k)
    return chosen_ranking(
        search.params,
        search.vector,
        search.top_k,
        filtered=search.filtered,
        exact_limit=backend.exact_limit,
    )
