"""Hybrid search on PostgreSQL as `ports.CandidateSearch`: both arms' candidates from one
read snapshot in two round trips (the two searches apart took nine).

The first round trip opens the snapshot and brings the keyword cache up to it
(`KeywordCache.current`); the keyword arm is scored here, in numpy. The second sends,
pipelined, the space check, the index settings, the vector arm (`vector_plan`: exact or
through the index, chosen inside the statement), the keyword candidates' rows (or the keyword
arm in SQL while the cache is built) and the COMMIT. A filter adds a statement for the keyword
arm's matching rows, and a caller's permissions one for its statistics (once per cache state).
While the cache is steady (`KeywordCache.steady`: the last search found nothing changed) the
two are one: the keyword arm is ranked from the cache's state while the server runs the vector
arm, and sent with the log's read; a change in the log and the search runs again as above.

The candidates' rows come back whole (their texts hold the question words); `kept_chunks` reads
the few a search keeps once more, by chunk id, so a chunk deleted since its ranking is left out
as the port says (a third round trip, of top_k rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.filters import Filter
from ragwright.models import (
    FTS5_BM25,
    Arm,
    BM25Parameters,
    Candidate,
    CandidateRankings,
    Chunk,
    EmbeddingSpace,
)
from ragwright.ports import Vectors
from ragwright.stores.postgres.keyword_cache import CacheState, KeywordCache
from ragwright.stores.postgres.keyword_search import KeywordPlan, PostgresKeywordSearch
from ragwright.stores.postgres.rows import CHUNK_COLUMNS, SCORE, SNAPSHOT, in_order
from ragwright.stores.postgres.vector_plan import VectorRanking
from ragwright.stores.postgres.vector_search import (
    PostgresVectorSearch,
    VectorQuery,
    vector_ranking,
)
from ragwright.stores.rows import SOURCE, chunk_from_row
from ragwright.terms import holders_in, passage_text

if TYPE_CHECKING:
    from psycopg import Connection, Cursor

#: A kept chunk and its document's source.
Kept = tuple[Chunk, str]


class PostgresCandidates(PostgresVectorSearch, PostgresKeywordSearch):
    """`hybrid_candidates` and `kept_chunks`, over the two arms' statements."""

    def wait_for_caches(self) -> None:
        """Wait until the keyword cache, the vector cache and the metadata index being built
        in the background are ready (tests, benchmarks)."""
        super().wait_for_caches()
        if self._vector_cache is not None:
            self._vector_cache.wait()
        if self._filter_matches.index is not None:
            self._filter_matches.index.wait()

    def hybrid_candidates(
        self,
        text: str,
        query: Vectors,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
        question: frozenset[str] = frozenset(),
    ) -> CandidateRankings:
        """Both arms' candidates from one read snapshot, with the ``question`` words each
        holds."""
        plan = self._keyword_plan(text, top_k, where, bm25)  # refuses a bad filter first
        asked = self._vector_query(query, top_k, where)
        ranking = None if asked is None else vector_ranking(asked[1], self._db.backend)
        cache = self._keyword_cache
        taken = None if cache is None else cache.taken()  # before the search's snapshot
        steady = None if cache is None or plan is None else cache.steady()

        def work(conn: Connection[Any]) -> tuple[list[Any], list[Any]]:
            if asked is not None and self.cached_filter(asked[1]) is not None:
                return self._filtered(conn, cache, taken, plan, asked)
            if steady is not None and cache is not None and plan is not None:
                found = self._at_once(conn, cache, steady, plan, asked, ranking)
                if found is not None:
                    return found
            state = None if cache is None else cache.current(conn, taken, SNAPSHOT)
            scored = None
            if plan is not None and state is not None:
                scored = self._cached_scores(conn, state, plan)
            vector_rows = keyword_rows = None
            space = None if asked is None else asked[0]
            begin = SNAPSHOT if cache is None else None  # else `current` began it
            # The space checked: a reindex swap since the query was embedded is told.
            with self.space_checked(conn, space, begin):
                if asked is not None and ranking is not None:
                    vector_rows = self.ranked_cursor(conn, asked[1], ranking)
                if plan is not None and scored is None:  # no cache (yet): in SQL
                    keyword_rows = conn.execute(plan.statement, plan.arguments)
                elif scored is not None:
                    keyword_rows = conn.execute(self.rows_of(scored))
                conn.execute("COMMIT")
            vector: list[Any] = []
            if asked is not None and vector_rows is not None:
                vector = self._filled(conn, *asked, vector_rows.fetchall())
            keyword = [] if keyword_rows is None else keyword_rows.fetchall()
            return (keyword if scored is None else in_order(keyword, scored)), vector

        keyword, vector = self._db.read(work, "hybrid search")
        return self._rankings(keyword, vector, question)

    def _filtered(
        self,
        conn: Connection[Any],
        cache: KeywordCache | None,
        taken: CacheState | None,
        plan: KeywordPlan | None,
        asked: tuple[EmbeddingSpace, VectorQuery],
    ) -> tuple[list[Any], list[Any]]:
        """Both arms' rows of a filtered search whose vector arm ranks from the vector cache:
        the keyword cache brought to the snapshot (a round trip), the filter's matches found
        once for both arms (another), the vectors not cached yet (while any are missing),
        then both arms' rows and the COMMIT."""
        space, search = asked
        state = None if cache is None else cache.current(conn, taken, SNAPSHOT)
        begin = SNAPSHOT if cache is None else None  # else `current` began it
        keyword_rows: Cursor[Any] | None = None
        scored = None
        with self.space_checked(conn, space, begin):
            matches = self.filter_matches(conn, search)
            arm = self.cached_vector_arm(conn, search, matches)
            if plan is not None and state is not None:
                scored = self._cached_scores(conn, state, plan, matching=matches.row_ids)
                keyword_rows = conn.execute(self.rows_of(scored))
            elif plan is not None:  # no keyword cache (yet): in SQL
                keyword_rows = conn.execute(plan.statement, plan.arguments)
            conn.execute("COMMIT")
        vector = self.cached_vector_rows(conn, space, search, arm)
        keyword = [] if keyword_rows is None else keyword_rows.fetchall()
        return (keyword if scored is None else in_order(keyword, scored)), vector

    def _at_once(
        self,
        conn: Connection[Any],
        cache: KeywordCache,
        steady: CacheState,
        plan: KeywordPlan,
        asked: tuple[EmbeddingSpace, VectorQuery] | None,
        ranking: VectorRanking | None,
    ) -> tuple[list[Any], list[Any]] | None:
        """Both arms' rows in one round trip (two with a filter) from a steady keyword cache
        (`KeywordCache.steady`): in one pipeline the snapshot, the space check, the change
        log's read, the vector arm (sent before the keyword arm is scored here, so the
        server ranks while this process scores), the keyword arm's rows and the COMMIT.
        None when the log shows a change since ``steady``: the caller searches again."""
        space = None if asked is None else asked[0]
        vector_rows: Cursor[Any] | None = None

        def vector_arm() -> None:
            nonlocal vector_rows
            if asked is not None and ranking is not None:
                vector_rows = self.ranked_cursor(conn, asked[1], ranking)

        with self.space_checked(conn, space, SNAPSHOT):
            log, scored, keyword_rows = self._steady_search(conn, steady, plan, vector_arm)
        if not cache.settled(steady, log.fetchone()):
            return None
        vector: list[Any] = []
        if asked is not None and vector_rows is not None:
            vector = self._filled(conn, *asked, vector_rows.fetchall())
        return in_order(keyword_rows.fetchall(), scored), vector

    def kept_chunks(
        self, chunk_ids: Sequence[str], keys: Mapping[str, int] | None = None
    ) -> dict[str, Kept]:
        """The whole chunk of each of ``chunk_ids`` with its document's source, in their
        order; a chunk gone since it was ranked is left out (``keys`` are not needed here:
        the chunk id is the primary key)."""
        statement = self._db.sql(
            f"SELECT {CHUNK_COLUMNS} FROM {{s}}.chunks c "
            "JOIN {s}.documents d ON d.id = c.document_id WHERE c.id = ANY(%s)"
        )
        if not chunk_ids:
            return {}
        found = self._db.read(  # autocommit: one statement, one round trip
            lambda conn: conn.execute(statement, [list(chunk_ids)]).fetchall(),
            "reading the kept chunks",
        )
        rows = {str(row[0]): (chunk_from_row(row), str(row[SOURCE])) for row in found}
        return {i: rows[i] for i in chunk_ids if i in rows}

    def _rankings(
        self, keyword: list[Any], vector: list[Any], question: frozenset[str]
    ) -> CandidateRankings:
        """The candidates of each arm's ranked rows, and which hold which question words."""
        rows: dict[str, Kept] = {}
        for row in [*keyword, *vector]:
            if row[0] not in rows:
                rows[str(row[0])] = (chunk_from_row(row), str(row[SOURCE]))
        ids = list(rows)
        found = holders_in(set(question), [passage_text(rows[i][0]) for i in ids])
        holders = {word: [ids[at] for at in positions] for word, positions in found.items()}
        return CandidateRankings(
            _candidates(keyword, Arm.BM25), _candidates(vector, Arm.VECTOR), holders, {}
        )


def _candidates(rows: list[Any], arm: Arm) -> list[Candidate]:
    arms = (arm,)
    return [Candidate(str(row[0]), str(row[1]), float(row[SCORE]), arms) for row in rows]
