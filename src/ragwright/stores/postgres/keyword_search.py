"""Keyword search: FTS5's BM25 (FTS5's idf; k1 1.2 and b 0.75 unless the search names others),
computed in SQL over the postings with terms from FTS5's own tokenizer, so scores equal the
SQLite store's. A caller bound to principals gets the statistics of what it may read (its
chunk count, average length and document frequencies, counted in the query), so its scores
are those of a collection holding only that."""

from __future__ import annotations

from psycopg import sql

from ragwright.filters import Filter, readable_part
from ragwright.models import FTS5_BM25, Arm, BM25Parameters, Hit, Scale
from ragwright.stores.fts_query import query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.rows import hits, ranked


class PostgresKeywordSearch:
    _db: SchemaDatabase
    _filters: FilterCompiler
    _terms: FTS5Terms
    _stop_words: frozenset[str]

    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]:
        """FTS5's BM25 over the postings, best first; scores are positive."""
        condition, params = self._filters.compile(where)
        words = query_terms(query, self._stop_words)
        if top_k <= 0 or not words:
            return []
        terms = self._terms.terms(" ".join(words))
        if not terms:
            return []
        readable = readable_part(where)
        corpus: sql.Composable = sql.SQL("TRUE")
        corpus_params: list[object] = []
        if readable is not None:
            corpus, corpus_params = self._filters.compile_readable_documents(readable)
        ranking = _bm25(where is not None, bm25, restricted=readable is not None)
        statement = ranked(self._db.identifier, ranking, condition, corpus=corpus)
        arguments = [list(terms), list(terms.values()), *corpus_params, *params, top_k]
        rows = self._db.run(
            lambda conn: conn.execute(statement, arguments).fetchall(), "keyword search"
        )
        return hits(rows, Scale.BM25, Arm.BM25)


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
