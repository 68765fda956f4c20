"""The ranking of a vector search as one statement that counts the candidates and takes the
exact path or the HNSW index by that count, so a search is one round trip (with the space
check and the index settings pipelined before it: `vector_search`).

- No filter: the candidates are the collection (the striped chunk counter); at most
  ``exact_limit`` of them are ranked exactly, more through the index.
- A filter: its matches are found once, by their row addresses (``ctid``), counting at most
  ``exact_limit + 1``. Few: exactly those rows are ranked, read by address (the filter is not
  evaluated again: for a ten-way ``OR`` of jsonb containments that cost more than the
  distances). Many: the index with pgvector's iterative scan, the filter checked per row.

Each path is an arm of a ``UNION ALL`` gated by the count (a one-time filter: PostgreSQL runs
only the arm that passes it), so the choice costs no statement of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.stores.postgres.filters import Params

#: Cosine similarity, exact; NaN (a zero stored vector) ranks as 0.
_SCORE = "coalesce(nullif(1 - (c.embedding <=> %s), 'NaN'), 0)"
_ALL_FEW = (
    "few AS MATERIALIZED (SELECT coalesce(sum(chunks), 0) <= %s AS yes FROM {s}.bm25_stats), "
)
_MATCHES_FEW = (
    "m AS MATERIALIZED (SELECT c.ctid AS at FROM {s}.chunks c WHERE {where} LIMIT %s), "
    "few AS MATERIALIZED (SELECT count(*) <= %s AS yes FROM m), "
)
_EXACT_ALL = f"SELECT c.id, {_SCORE} AS score FROM {{s}}.chunks c WHERE TRUE"
_EXACT_MATCHES = (
    f"SELECT c.id, {_SCORE} AS score FROM {{s}}.chunks c "
    "WHERE c.ctid = ANY(ARRAY(SELECT at FROM m))"
)
_INDEXED = (
    "SELECT h.id, 1 - h.distance AS score FROM (SELECT c.id, c.embedding <=> %s AS distance "
    "FROM {s}.chunks c WHERE {gate}{where} ORDER BY distance LIMIT %s) h"
)


@dataclass(frozen=True, slots=True)
class VectorRanking:
    """A ranking for `rows.ranked`: the common table expressions it reads (``before``), the
    query selecting (id, score) of chunks ``c``, and the parameters of both, in order. Its
    text names the schema ``{s}`` and the filter ``{where}``."""

    before: str
    ranking: str
    params: Params


def exact_ranking(params: Params, vector: object, top_k: int) -> VectorRanking:
    """Every candidate ranked exactly."""
    ranking = f"SELECT c.id, {_SCORE} AS score FROM {{s}}.chunks c WHERE {{where}} "
    return VectorRanking(
        "", ranking + "ORDER BY score DESC, c.id LIMIT %s", [vector, *params, top_k]
    )


def indexed_ranking(params: Params, vector: object, top_k: int) -> VectorRanking:
    """Through the HNSW index alone."""
    return VectorRanking("", _INDEXED.replace("{gate}", ""), [vector, *params, top_k])


def chosen_ranking(
    params: Params, vector: object, top_k: int, *, filtered: bool, exact_limit: int
) -> VectorRanking:
    """Exact over at most ``exact_limit`` candidates, through the index beyond."""
    if filtered:
        before, exact = _MATCHES_FEW, _EXACT_MATCHES
        counting: Params = [*params, exact_limit + 1, exact_limit]
    else:
        before, exact, counting = _ALL_FEW, _EXACT_ALL, [exact_limit]
    ranking = (
        f"({exact} AND (SELECT yes FROM few) ORDER BY score DESC, c.id LIMIT %s) UNION ALL ("
        + _INDEXED.replace("{gate}", "NOT (SELECT yes FROM few) AND ")
        + ")"
    )
    return VectorRanking(before, ranking, [*counting, vector, top_k, vector, *params, top_k])
