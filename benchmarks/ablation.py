"""The retrieval ablation on BEIR SciFact: each component alone and cumulatively, train and test.

    .venv/bin/python benchmarks/ablation.py [--dataset PATH]

Runs `ragwright eval`'s pipeline on both splits with explicit configurations (so the table does
not move when defaults change), on indexes cached by the eval cache (the first run embeds the
corpus twice: whole documents and recursive chunks, about 15 minutes on 2 cores). Choose on
train; report test. Prints a Markdown table with the change each row makes against the row it
builds on. BM25 tokenization has its own ablation: benchmarks/bm25_ablation.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _scifact_index import DATASET
from ragwright.evaluation import EvalConfig, load_dataset, run_evaluation

# (name, what it adds, the row it builds on, config). Each row changes one thing.
ROWS: list[tuple[str, str, str | None, dict[str, object]]] = [
    ("bm25", "BM25 alone, one chunk per document", None, {"mode": "bm25"}),
    ("vector", "dense alone, one chunk per document", None, {"mode": "vector"}),
    ("hybrid-rrf", "+ RRF fusion of both arms (k = 60)", "bm25", {"mode": "hybrid"}),
    (
        "hybrid-rrf-chunks",
        "+ recursive chunking (1000/100), best chunk per document",
        "hybrid-rrf",
        {"mode": "hybrid", "chunking": "recursive"},
    ),
    (
        "hybrid-convex-chunks",
        "+ convex fusion instead of RRF (the default)",
        "hybrid-rrf-chunks",
        {"mode": "hybrid", "chunking": "recursive", "fusion": "convex"},
    ),
    (
        "vector-chunks",
        "dense alone, recursive chunking",
        "vector",
        {"mode": "vector", "chunking": "recursive"},
    ),
    (
        "rrf-k20",
        "RRF with k = 20 instead of 60",
        "hybrid-rrf-chunks",
        {"mode": "hybrid", "chunking": "recursive", "rrf_k": 20},
    ),
    (
        "convex-vector-1.5",
        "convex, vector arm weighted 1.5",
        "hybrid-convex-chunks",
        {"mode": "hybrid", "chunking": "recursive", "fusion": "convex", "vector_weight": 1.5},
    ),
    (
        "convex-bm25-1.5",
        "convex, BM25 arm weighted 1.5",
        "hybrid-convex-chunks",
        {"mode": "hybrid", "chunking": "recursive", "fusion": "convex", "bm25_weight": 1.5},
    ),
    (
        "convex-sum",
        "convex, documents scored by the sum of their chunks",
        "hybrid-convex-chunks",
        {"mode": "hybrid", "chunking": "recursive", "fusion": "convex", "aggregate": "sum"},
    ),
]


def configs() -> list[EvalConfig]:
    base = {
        "chunking": "document",
        "fusion": "rrf",
        "embedder": "minilm",
        "top_k": 100,
        "document_share": 0.0,  # chunks fused one by one, as when this table was made
    }
    return [EvalConfig.from_mapping({**base, **raw, "name": name}) for name, _, _, raw in ROWS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    args = parser.parse_args()
    ndcg: dict[str, dict[str, float]] = {}
    for split in ("train", "test"):
        report = run_evaluation(load_dataset(args.dataset, split), configs())
        for result in report.results:
            ndcg.setdefault(result.config.name, {})[split] = result.metrics.ndcg_at_10
    print("| configuration | adds | train nDCG@10 | Δ train | test nDCG@10 | Δ test |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, adds, base, _ in ROWS:
        cells = []
        for split in ("train", "test"):
            value = ndcg[name][split]
            delta = f"{value - ndcg[base][split]:+.4f}" if base else ""
            cells += [f"{value:.4f}", delta]
        print(f"| {name} | {adds} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
