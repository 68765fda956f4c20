from __future__ import annotations

import math
from pathlib import Path

import pytest
import pytrec_eval  # type: ignore[import-untyped]

from ragwright.evaluation.metrics import (
    evaluate,
    hit_rate_at_k,
    load_beir,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
)


def test_ndcg_hand_computed_binary() -> None:
    # relevant at ranks 2 and 4 of two relevant documents
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(["x", "a", "y", "b"], {"a": 1, "b": 1}) == pytest.approx(dcg / ideal)


def test_ndcg_graded_relevance_uses_linear_gain() -> None:
    ranked = ["b", "a"]
    judged = {"a": 2, "b": 1}
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(ranked, judged) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["a", "b"], judged) == pytest.approx(1.0)


def test_ndcg_agrees_with_trec_eval_on_graded_judgements() -> None:
    """trec_eval's ndcg_cut (its C code, through pytrec_eval) is the reference the docs name."""
    qrels = {
        "q1": {"a": 3, "b": 1, "c": 2, "d": 0},
        "q2": {"x": 1, "y": 4},
        "q3": {"m": 2, "n": 2, "o": 1, "p": 3},
    }
    runs = {
        "q1": ["b", "z", "a", "d", "c"],
        "q2": ["w", "x", "v", "y"],
        "q3": ["o", "p", "q", "m", "n"],
    }
    # trec_eval orders a run by score; descending scores keep the list's order
    trec_run = {q: {d: float(-i) for i, d in enumerate(docs)} for q, docs in runs.items()}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(trec_run)
    for query, docs in runs.items():
        assert ndcg_at_k(docs, qrels[query]) == pytest.approx(reference[query]["ndcg_cut_10"])


def test_cutoff_and_other_metrics() -> None:
    ranked = [f"d{i}" for i in range(20)]
    judged = {"d3": 1, "d15": 1}
    assert recall_at_k(ranked, judged, 10) == 0.5
    assert mrr_at_k(ranked, judged, 10) == 0.25
    assert hit_rate_at_k(ranked, judged, 3) == 0.0
    assert ndcg_at_k(ranked, {"d15": 1}, 10) == 0.0


def test_evaluate_averages_judged_queries_and_counts_missing_as_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    scores = evaluate({"q1": ["a"]}, qrels)
    assert scores.queries == 2
    assert scores.ndcg_at_10 == 0.5 and scores.mrr_at_10 == 0.5


def test_load_beir_reads_the_layout(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "T", "text": "body"}\n{"_id": 2, "text": "x"}\n'
    )
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "what"}\n{"_id": "q9", "text": "no"}\n'
    )
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    data = load_beir(tmp_path)
    assert data.corpus == {"d1": ("T", "body"), "2": ("", "x")}
    assert data.queries == {"q1": "what"}
    assert data.qrels == {"q1": {"d1": 2}}
