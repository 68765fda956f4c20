"""Querying and scoring: rank documents for each query, then score the rankings."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragwright.evaluation.config import Aggregate, EvalConfig, _choice
from ragwright.evaluation.metrics import Qrels, all_support_at_k, evaluate, ndcg_at_k, recall_at_k
from ragwright.evaluation.progress import ProgressCallback, Stage, _report
from ragwright.index import Index

# -- querying -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedDocument:
    document_id: str
    score: float


@dataclass(frozen=True, slots=True)
class QueryRun:
    """One query's document ranking, best first, and the time retrieval took (in ms,
    embedding the query included); ``mode``: the search mode that ran (for ``auto``, the
    one its route chose)."""

    query_id: str
    documents: tuple[RankedDocument, ...]
    latency_ms: float
    mode: str = ""

    @property
    def ranked_ids(self) -> list[str]:
        return [document.document_id for document in self.documents]


def run_queries(
    index: Index,
    queries: Mapping[str, str],
    config: EvalConfig,
    progress: ProgressCallback | None = None,
) -> list[QueryRun]:
    """Retrieve for every query, in order, through `Index.search` with the configuration's
    `SearchRequest`: the call ``ragwright search`` makes. One untimed warm-up query first loads
    what the first real query would otherwise pay for (the model session, the vector and BM25
    caches)."""

    def search(text: str) -> tuple[list[RankedDocument], str]:
        route, hits = index.search_routed(text, config.search)
        ranked = aggregate_hits(((hit.source, hit.score) for hit in hits), config.aggregate)
        return ranked, route.mode

    runs: list[QueryRun] = []
    _report(progress, Stage.QUERY, config.name, 0, len(queries))
    if queries:
        search(next(iter(queries.values())))
    for query_id, text in queries.items():
        started = time.perf_counter()
        documents, mode = search(text)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        runs.append(QueryRun(query_id, tuple(documents), elapsed_ms, mode))
        _report(progress, Stage.QUERY, config.name, len(runs), len(queries))
    return runs


def aggregate_hits(
    scored_chunks: Iterable[tuple[str, float]], how: Aggregate | str = Aggregate.MAX
) -> list[RankedDocument]:
    """Chunk hits, best first, as (document id, score) → a document ranking, best first.

    ``max``: each document at the rank of its best chunk, with that chunk's score. ``sum``:
    documents by the sum of their chunks' scores; ties keep the order of their best chunks."""
    how = _choice(Aggregate, how, "aggregate")
    scores: dict[str, float] = {}
    for document_id, score in scored_chunks:
        if document_id not in scores:
            scores[document_id] = score
        elif how is Aggregate.SUM:
            scores[document_id] += score
    order = list(scores)  # first appearance = best chunk's rank
    if how is Aggregate.SUM:
        order.sort(key=lambda document_id: -scores[document_id])  # stable: ties keep rank order
    return [RankedDocument(document_id, scores[document_id]) for document_id in order]


# -- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Metrics:
    """Means over the evaluated queries (see `ragwright.evaluation.metrics` for the definitions)."""

    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float
    hit_rate_at_10: float
    queries: int
    #: For multi-hop datasets (several relevant documents per query): recall at small k, and
    #: all-support recall@k, the share of queries with *every* relevant document in the top k.
    recall_at_2: float = 0.0
    recall_at_5: float = 0.0
    all_support_at_2: float = 0.0
    all_support_at_5: float = 0.0
    all_support_at_10: float = 0.0
    #: Judged queries with more than one relevant document (0: the rows above add little).
    multi_relevant_queries: int = 0


#: The cut-offs of the multi-hop metrics: (Metrics field, metric, k).
MULTI_HOP_METRICS = (
    ("recall_at_2", recall_at_k, 2),
    ("recall_at_5", recall_at_k, 5),
    ("all_support_at_2", all_support_at_k, 2),
    ("all_support_at_5", all_support_at_k, 5),
    ("all_support_at_10", all_support_at_k, 10),
)


@dataclass(frozen=True, slots=True)
class Latency:
    """Retrieval latency percentiles in milliseconds (linear interpolation)."""

    p50: float
    p95: float
    p99: float
    mean: float

    @classmethod
    def from_samples(cls, samples_ms: Sequence[float]) -> Latency:
        if not samples_ms:
            return cls(0.0, 0.0, 0.0, 0.0)
        p50, p95, p99 = (float(p) for p in np.percentile(samples_ms, [50, 95, 99]))
        return cls(p50, p95, p99, float(np.mean(samples_ms)))


@dataclass(frozen=True, slots=True)
class QueryScore:
    query_id: str
    ndcg_at_10: float
    recall_at_100: float
    latency_ms: float


def score_runs(runs: Sequence[QueryRun], qrels: Qrels) -> tuple[Metrics, list[QueryScore]]:
    """Mean metrics over the runs' queries, and each query's nDCG@10 and Recall@100."""
    ranked = {run.query_id: run.ranked_ids for run in runs}
    judged = {query_id: qrels.get(query_id, {}) for query_id in ranked}
    means = evaluate(ranked, judged)
    per_query = [
        QueryScore(
            run.query_id,
            ndcg_at_k(ranked[run.query_id], judged[run.query_id], 10),
            recall_at_k(ranked[run.query_id], judged[run.query_id], 100),
            run.latency_ms,
        )
        for run in runs
    ]
    recall_100 = float(np.mean([s.recall_at_100 for s in per_query])) if per_query else 0.0
    metrics = Metrics(
        **_multi_hop(ranked, qrels),
        ndcg_at_10=means.ndcg_at_10,
        recall_at_10=means.recall_at_10,
        recall_at_100=recall_100,
        mrr_at_10=means.mrr_at_10,
        hit_rate_at_10=means.hit_rate_at_10,
        queries=means.queries,
    )
    return metrics, per_query


def _multi_hop(ranked: Mapping[str, Sequence[str]], qrels: Qrels) -> dict[str, Any]:
    """The multi-hop means over the run's judged queries (those `evaluate` counts)."""
    pairs = [
        (run, qrels[query_id])
        for query_id, run in ranked.items()
        if any(grade > 0 for grade in qrels.get(query_id, {}).values())
    ]
    several = sum(sum(grade > 0 for grade in judged.values()) > 1 for _, judged in pairs)
    values: dict[str, Any] = {"multi_relevant_queries": several}
    for name, metric, k in MULTI_HOP_METRICS:
        scores = [metric(run, judged, k) for run, judged in pairs]
        values[name] = float(np.mean(scores)) if scores else 0.0
    return values


@dataclass(frozen=True, slots=True)
class WinLoss:
    """Per-query nDCG@10 of a configuration against the baseline (the first configuration)."""

    wins: int
    losses: int
    ties: int
