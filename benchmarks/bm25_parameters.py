"""BM25's k1 and b (the `bm25_k1` / `bm25_b` search settings) over a grid, in hybrid search.

    nice .venv/bin/python benchmarks/bm25_parameters.py --scifact-cache DIR --hotpot-cache DIR2

Every cell is a `ragwright eval` configuration over the default index (the settings are read
at query time, so nothing is re-indexed): SciFact train for the whole grid, then the pair that
scores best on train, beside FTS5's own pair (1.2, 0.75), on SciFact test and HotpotQA dev500.
Because the best of many noisy cells is biased upward, the grid's gain is also estimated by
5-fold cross-validation on train: the pair is chosen on four fifths of the queries and scored
on the fifth (five shuffles). Prints Markdown tables; W/L/T are per-query nDCG@10 against
FTS5's pair.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from _quality_runs import add_dataset_arguments
from ragwright.evaluation import ConfigResult, EvalConfig, load_dataset, run_evaluation

BASE = (1.2, 0.75)  # FTS5's own, the default
K1 = (0.8, 1.0, 1.2, 1.5)
B = (0.3, 0.5, 0.75)


def config(k1: float, b: float) -> EvalConfig:
    return EvalConfig.from_mapping({"name": f"k1-{k1}-b-{b}", "bm25_k1": k1, "bm25_b": b})


def run(
    path: Path, split: str, cache: Path | None, pairs: Sequence[tuple[float, float]]
) -> list[ConfigResult]:
    report = run_evaluation(load_dataset(path, split), [config(*p) for p in pairs], cache_dir=cache)
    return list(report.results)


def cross_validated(
    per_query: dict[tuple[float, float], dict[str, float]],
) -> list[tuple[float, float]]:
    """(chosen on 4/5, FTS5's pair) mean nDCG@10 over the held-out fifths, per shuffle."""
    queries = sorted(per_query[BASE])
    figures = []
    for seed in range(5):
        shuffled = queries[:]
        random.Random(seed).shuffle(shuffled)
        folds = [shuffled[i::5] for i in range(5)]
        chosen = reference = 0.0
        for i, held in enumerate(folds):
            fit = [q for j, fold in enumerate(folds) if j != i for q in fold]
            best = max(per_query, key=lambda pair: np.mean([per_query[pair][q] for q in fit]))
            chosen += sum(per_query[best][q] for q in held)
            reference += sum(per_query[BASE][q] for q in held)
        figures.append((chosen / len(queries), reference / len(queries)))
    return figures


def row(result: ConfigResult, base: ConfigResult, support: bool = False) -> str:
    versus = result.versus(base)
    cell = f"{result.metrics.ndcg_at_10:.4f}"
    if support:
        cell += f" / {result.metrics.all_support_at_5:.3f}"
    return f"{cell} ({versus.wins}/{versus.losses}/{versus.ties})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_dataset_arguments(parser)
    args = parser.parse_args()
    grid = [BASE] + [(k1, b) for k1 in K1 for b in B if (k1, b) != BASE]
    train = run(args.scifact, "train", args.scifact_cache, grid)
    base = train[0]
    print("| k1 \\ b | " + " | ".join(str(b) for b in B) + " |")
    print("| --- |" + " --- |" * len(B))
    by_pair = dict(zip(grid, train, strict=True))
    for k1 in K1:
        cells = [row(by_pair[(k1, b)], base) for b in B]
        print(f"| {k1} | " + " | ".join(cells) + " |")
    best = max(grid, key=lambda pair: by_pair[pair].metrics.ndcg_at_10)
    per_query = {p: {s.query_id: s.ndcg_at_10 for s in r.per_query} for p, r in by_pair.items()}
    for chosen, reference in cross_validated(per_query):
        print(f"5-fold CV on train: chosen pair {chosen:.4f}, FTS5's pair {reference:.4f}")
    pairs = [BASE, best]
    test = run(args.scifact, "test", args.scifact_cache, pairs)
    hotpot = run(args.hotpot, "test", args.hotpot_cache, pairs)
    print("| k1, b | SciFact train | SciFact test | HotpotQA nDCG@10 / all-support@5 |")
    print("| --- | --- | --- | --- |")
    for i, pair in enumerate(pairs):
        cells = [row(by_pair[pair], base), row(test[i], test[0]), row(hotpot[i], hotpot[0], True)]
        print(f"| {pair[0]}, {pair[1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
