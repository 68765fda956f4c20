"""Ranking metrics and BEIR-format loading, implemented once for `eval` and the benchmarks.

Definitions (``ranked`` is the system's document ids, best first; ``judged`` maps relevant
document ids to graded relevance > 0; k is the cut-off):

- nDCG@k: DCG = Σ_{i≤k} rel_i / log2(i + 1), divided by the DCG of the ideal ordering of the
  judged documents: linear gains, trec_eval's ``ndcg_cut`` (and so BEIR's, which calls it).
  On binary judgements this equals the 2^rel − 1 form; on graded ones it does not.
- Recall@k: |relevant ∩ top k| / |relevant|.
- MRR@k: 1 / rank of the first relevant document within the top k, else 0.
- Hit rate@k: 1 when any relevant document is in the top k, else 0.

A query without judgements has no defined score and is excluded by the caller.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Qrels = dict[str, dict[str, int]]


def ndcg_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    ideal_dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if ideal_dcg == 0:
        return 0.0
    dcg = sum(judged.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    return float(dcg / ideal_dcg)


def recall_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def all_support_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    """1 when every relevant document is in the top ``k`` (a multi-hop question's supporting
    passages all retrieved), else 0; 0 for a query with none."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    return 1.0 if relevant and relevant.issubset(ranked[:k]) else 0.0


def mrr_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if judged.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def hit_rate_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    return 1.0 if mrr_at_k(ranked, judged, k) > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Scores:
    ndcg_at_10: float
    recall_at_10: float
    mrr_at_10: float
    hit_rate_at_10: float
    queries: int


def evaluate(run: Mapping[str, Sequence[str]], qrels: Qrels) -> Scores:
    """Mean metrics over the judged queries (a judged query missing from the run scores 0)."""
    judged_queries = [q for q, judged in qrels.items() if any(g > 0 for g in judged.values())]
    if not judged_queries:
        return Scores(0.0, 0.0, 0.0, 0.0, 0)
    totals = [0.0, 0.0, 0.0, 0.0]
    for query_id in judged_queries:
        ranked, judged = run.get(query_id, ()), qrels[query_id]
        for i, metric in enumerate((ndcg_at_k, recall_at_k, mrr_at_k, hit_rate_at_k)):
            totals[i] += metric(ranked, judged, 10)
    n = len(judged_queries)
    ndcg, recall, mrr, hit_rate = (t / n for t in totals)
    return Scores(ndcg, recall, mrr, hit_rate, queries=n)


# -- BEIR layout ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BeirDataset:
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: Qrels


def load_beir(folder: str | Path, split: str = "test") -> BeirDataset:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``. Only the queries
    judged in the split are returned."""
    root = Path(folder)
    corpus: dict[str, tuple[str, str]] = {}
    with (root / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                corpus[str(row["_id"])] = (row.get("title") or "", row.get("text") or "")
    qrels: Qrels = {}
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        for row in reader:
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                continue  # the header line
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries: dict[str, str] = {}
    with (root / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                if str(row["_id"]) in qrels:
                    queries[str(row["_id"])] = row["text"]
    return BeirDataset(corpus, queries, qrels)


def document_text(title: str, text: str) -> str:
    """How a BEIR record becomes document content: title, blank line, text."""
    return f"{title}\n\n{text}" if title else text
