"""The multi-hop metrics beside nDCG: recall@2/5 and all-support recall@k (every relevant
document of a query in the top k), as eval's scoring and its --json report them."""

from __future__ import annotations

import pytest

from ragwright.evaluation.metrics import all_support_at_k
from ragwright.evaluation.scoring import QueryRun, RankedDocument, score_runs


def run(query_id: str, ranked: list[str]) -> QueryRun:
    return QueryRun(query_id, tuple(RankedDocument(d, 1.0) for d in ranked), 1.0)


def test_all_support_needs_every_relevant_document_within_k() -> None:
    judged = {"a": 1, "b": 1, "x": 0}
    assert all_support_at_k(["a", "c", "b"], judged, 3) == 1.0
    assert all_support_at_k(["a", "c", "b"], judged, 2) == 0.0
    assert all_support_at_k(["a", "b"], {"z": 0}, 2) == 0.0  # nothing relevant: no support


def test_scoring_reports_recall_and_all_support_at_small_k() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 1}, "q3": {"e": 1}}
    runs = [
        run("q1", ["a", "b", "x"]),  # both at once
        run("q2", ["c", "x", "y", "z", "d"]),  # the second hop only at rank 5
        run("q3", ["x", "e"]),
    ]
    metrics, _ = score_runs(runs, qrels)
    assert metrics.recall_at_2 == pytest.approx((1 + 0.5 + 1) / 3)
    assert metrics.recall_at_5 == pytest.approx(1.0)
    assert metrics.all_support_at_2 == pytest.approx(2 / 3)
    assert metrics.all_support_at_5 == metrics.all_support_at_10 == pytest.approx(1.0)
    assert metrics.multi_relevant_queries == 2
