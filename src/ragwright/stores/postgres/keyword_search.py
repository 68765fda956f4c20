"""Keyword search: FTS5's BM25 (FTS5's idf; k1 1.2 and b 0.75 unless the search names others)
over the postings, with terms from FTS5's own tokenizer, so scores equal the SQLite store's.

Scored in this process from the keyword cache (`keyword_cache`: only the query's terms'
postings, in numpy) once it is built, and in SQL over every posting of the query's terms
before that (or with ``keyword_cache = false``); the two give the same scores. Either way one
repeatable-read transaction ranks, filters and reads the rows. A caller bound to principals
gets the statistics of what it may read (its chunk count, average length and document
frequencies), so its scores are those of a collection holding only that."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

from ragwright.filters import Filter, readable_part
from ragwright.models import FTS5_BM25, Arm, BM25Parameters, Hit, Scale
from ragwright.stores.fts_query import query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.keyword_corpora import Corpora
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filter_matches import FilterMatches
from ragwright.stores.postgres.filters import FilterCompiler, Params
from ragwright.stores.postgres.keyword_cache import CacheState, KeywordCache, parsed
from ragwright.stores.postgres.keyword_log import since_statement
from ragwright.stores.postgres.rows import SNAPSHOT, hits, in_order, ranked, rows_of
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection, Cursor

#: No limit on a filter's matches (`FilterMatches`): the keyword arm ranks them all.
_EVERY_MATCH = 2**62
_READABLE = (
    "SELECT string_agg(c.row_id::text, ',') FROM {s}.chunks c "
    "JOIN {s}.documents d ON d.id = c.document_id WHERE {corpus}"
)


class PostgresKeywordSearch:
    _db: SchemaDatabase
    _filters: FilterCompiler
    _terms: FTS5Terms
    _stop_words: frozenset[str]
    _keyword_cache: KeywordCache | None
    _filter_matches: FilterMatches
    _corpora: Corpora

    def wait_for_caches(self) -> None:
        """Wait until the keyword cache being built in the background is ready (tests,
        benchmarks)."""
        if self._keyword_cache is not None:
            self._keyword_cache.wait()

    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]:
        """FTS5's BM25 over the postings, best first; scores are positive."""
        plan = self._keyword_plan(query, top_k, where, bm25)
        if plan is None:
            return []
        cache = self._keyword_cache
        taken = None if cache is None else cache.taken()  # before the search's snapshot
        steady = None if cache is None else cache.steady()

        def work(conn: Connection[Any]) -> list[Any]:
            if steady is not None and cache is not None:
                with conn.pipeline():
                    conn.execute(SNAPSHOT)
                    log, ranking, read = self._steady_search(conn, steady, plan)
                if cache.settled(steady, log.fetchone()):
                    return in_order(read.fetchall(), ranking)
            if cache is None:
                conn.execute(SNAPSHOT)
            state = None if cache is None else cache.current(conn, taken, SNAPSHOT)
            if state is None:
                rows = conn.execute(plan.statement, plan.arguments).fetchall()
                conn.execute("COMMIT")
                return rows
            scored = self._cached_scores(conn, state, plan)
            # The row ids as a literal: the COMMIT goes in the same message (no parameters).
            cursor = conn.execute(self.rows_of(scored) + sql.SQL("; COMMIT"))
            return in_order(cursor.fetchall(), scored)

        # One round trip from a steady cache (two with a filter), else its own BEGIN and
        # COMMIT, each sent with a statement: two round trips from the cache.
        rows = self._db.read(work, "keyword search")
        return hits(rows, Scale.BM25, Arm.BM25)

    def _keyword_plan(
        self, query: str, top_k: int, where: Filter | None, bm25: BM25Parameters
    ) -> KeywordPlan | None:
        """What a keyword search of ``query`` runs (None: nothing to search for); a bad
        filter is refused here."""
        condition, params = self._filters.compile(where)
        words = query_terms(query, self._stop_words)
        if top_k <= 0 or not words:
            return None
        terms = self._terms.terms(" ".join(words))
        if not terms:
            return None
        readable = readable_part(where)
        corpus: sql.Composable = sql.SQL("TRUE")
        corpus_params: list[object] = []
        if readable is not None:
            corpus, corpus_params = self._filters.compile_readable_documents(readable)
        ranking = _bm25(where is not None, bm25, restricted=readable is not None)
        statement = ranked(self._db.identifier, ranking, condition, corpus=corpus)
        arguments = [list(terms), list(terms.values()), *corpus_params, *params, top_k]
        search = _CachedSearch(terms, top_k, bm25, condition if where else None, params, where)
        return KeywordPlan(search, readable, (corpus, corpus_params), statement, arguments)

    def _steady_search(
        self,
        conn: Connection[Any],
        steady: CacheState,
        plan: KeywordPlan,
        meanwhile: Callable[[], None] | None = None,
    ) -> tuple[Cursor[Any], list[tuple[int, float]], Cursor[Any]]:
        """``plan`` ranked from ``steady`` (`KeywordCache.steady`), sent in ``conn``'s
        pipeline after its snapshot's BEGIN: the change log's read since ``steady``, what
        ``meanwhile`` sends, the ranking's rows and the COMMIT; one round trip (two with a
        filter or a caller's statistics to read first). Returned unread: the log's cursor,
        the ranking and its rows' cursor. The ranking holds if `KeywordCache.settled` says
        so (else the search runs again, reading the log first)."""
        log = conn.execute(since_statement(self._db, steady.at))
        scored = self._cached_scores(conn, steady, plan, meanwhile)
        rows = conn.execute(self.rows_of(scored))
        conn.execute("COMMIT")
        return log, scored, rows

    def _cached_scores(
        self,
        conn: Connection[Any],
        state: CacheState,
        plan: KeywordPlan,
        meanwhile: Callable[[], None] | None = None,
        matching: RowIds | None = None,
    ) -> list[tuple[int, float]]:
        """The (row id, score) ranking of ``plan`` from the cache ``state`` (as of ``conn``'s
        snapshot): a statement for the filter's rows (unless ``matching`` gives them, read in
        that snapshot), one for a caller's statistics (once per state), none otherwise.
        ``meanwhile`` is called before the scoring (in a pipeline: what it sends runs on the
        server while this process scores)."""
        search, readable, corpus = plan.search, plan.readable, plan.corpus
        matrix = state.matrix
        allowed = None
        if search.condition is not None:
            if matching is None:  # every match (from the metadata index: `filter_matches`)
                assert search.where is not None
                every = self._filter_matches.matches(
                    conn, search.where, search.condition, search.params, _EVERY_MATCH
                )
                matching = every.row_ids
                assert matching is not None
            allowed = matrix.rows.slots_of(matching)
        statistics = None
        if readable is not None:
            statement = sql.SQL(_READABLE).format(s=self._db.identifier, corpus=corpus[0])
            statistics = self._corpora.get(
                (state.number, repr(readable)),
                matrix,
                lambda: matrix.rows.slots_of(_row_ids(conn, statement, corpus[1])),
            )
        if meanwhile is not None:
            meanwhile()
        scored = matrix.top_k(search.terms, search.top_k, allowed, search.bm25, statistics)
        return [(int(r), float(score)) for r, score in scored]

    def rows_of(self, scored: list[tuple[int, float]]) -> sql.Composed:
        """The statement reading the rows of ``scored`` (`rows.rows_of`)."""
        return rows_of(self._db.identifier, scored)


@dataclass(frozen=True, slots=True)
class KeywordPlan:
    """A keyword search, ready to run: from the cache (``search``, with the caller's
    permissions ``readable`` and their condition over documents ``corpus``), or in SQL
    (``statement`` with its ``arguments``, a `rows.ranked` statement)."""

    search: _CachedSearch
    readable: Filter | None
    corpus: tuple[sql.Composable, Params]
    statement: sql.Composed
    arguments: list[object]


@dataclass(frozen=True, slots=True)
class _CachedSearch:
    """What a search from the cache needs: its terms and their counts in the query, how many
    rows, BM25's parameters, and the filter (None: none) with its parameters."""

    terms: dict[str, int]
    top_k: int
    bm25: BM25Parameters
    condition: sql.Composable | None
    params: Params
    where: Filter | None = None


def _row_ids(conn: Connection[Any], statement: sql.Composed, params: Params) -> RowIds:
    row = conn.execute(statement, params).fetchone()
    return parsed(row[0] if row else None, np.int64)


def _bm25(filtered: bool, bm25: BM25Parameters, *, restricted: bool = False) -> str:
    """FTS5's bm25(): for a term in ``hits`` of ``rows`` chunks, ``idf = ln((rows - hits
    + 0.5) / (hits + 0.5))`` floored at 1e-6; a chunk of ``dl`` tokens with ``tf`` of them
    scores ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, summed over the
    query's terms (counted as often as they occur in the query). Document frequencies are
    counted live (one index range per query term); the chunk count and average length come
    from the striped counters. A filter restricts the postings to the matching chunks first,
    so a selective filter reads few postings. ``restricted``: the statistics are counted over
    the chunks of the documents ``{corpus}`` keeps (a caller's), in the query: the same
    values by the same operations as the counters give a collection of those alone. A
    ranking for `ranked`."""
    k1, b = bm25.k1, bm25.b  # floats (checked by BM25Parameters), spliced as literals
    restrict, join = "", ""
    if filtered:
        restrict = ", allowed AS MATERIALIZED (SELECT c.id FROM {s}.chunks c WHERE {where})"
        join = "JOIN allowed a ON a.id = p.chunk_id "
    base = f"  {k1 * (1 - b)!r}::float8 AS base, {k1 * b!r}::float8 / "
    if restricted:
        statistics = (
            "rd AS MATERIALIZED (SELECT d.id FROM {s}.documents d WHERE {corpus}), "
            f"n AS MATERIALIZED (SELECT count(*)::float8 AS rows, {base}"
            "  greatest(coalesce(sum(c.tokens), 0)::float8 / greatest(count(*), 1), 1e-9) "
            "  AS slope FROM {s}.chunks c JOIN rd ON rd.id = c.document_id), "
            "df AS MATERIALIZED (SELECT q.term, q.qtf, (SELECT count(*) FROM {s}.postings p "
            "  JOIN rd ON rd.id = p.document_id WHERE p.term = q.term) AS hits FROM q), "
        )
    else:
        statistics = (
            f"n AS MATERIALIZED (SELECT sum(chunks)::float8 AS rows, {base}"
            "  greatest(sum(tokens)::float8 / greatest(sum(chunks), 1), 1e-9) AS slope "
            "  FROM {s}.bm25_stats), "
            "df AS MATERIALIZED (SELECT q.term, q.qtf, "
            "  (SELECT count(*) FROM {s}.postings p WHERE p.term = q.term) AS hits FROM q), "
        )
    return (
        "WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, qtf)), "
        + statistics
        + f"w AS MATERIALIZED (SELECT df.term, df.qtf * {k1 + 1!r}::float8 * "
        "  greatest(ln((n.rows - df.hits + 0.5) / (df.hits + 0.5)), 1e-6) AS weight "
        f"  FROM df, n WHERE df.hits > 0){restrict} "
        "SELECT p.chunk_id AS id, "
        "sum(w.weight * p.tf / (p.tf + n.base + n.slope * p.dl)) AS score "
        f"FROM w JOIN {{s}}.postings p ON p.term = w.term {join}CROSS JOIN n "
        "GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
    )
