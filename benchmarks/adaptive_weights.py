"""Query-adaptive arm weights (issue 32): hybrid search with the BM25 arm weighed per query by
the share of the question's content words its top hit holds (``lexical_pivot``, see
`ragwright.pipeline.search.adaptive_weights`), against the fixed weights.

    nice .venv/bin/python benchmarks/adaptive_weights.py --cache-dir DIR [--split dev|test]
        [--pivot 0 --pivot 0.6 ...] [--vector-weight 1 ...] [--scifact-cache DIR]
        [--scifact-split train|test] [--hotpot-cache DIR]

Paraphrased sets (``benchmarks/data/paraphrased``, ingested into ``DIR/paraphrased-NAME`` as
`answers_paraphrased.py` ingests them): every answerable question of the split is searched with
``Index.search`` (top 10), and evidence@1/@5/@10 counts the questions whose evidence quote
(whitespace-normalized) the first / first five / first ten hits hold. With ``--scifact-cache``
(and its split) and ``--hotpot-cache`` the same variants run through ``ragwright.evaluation``
over BEIR SciFact and HotpotQA dev500 (``/work/shared/datasets`` or ``--datasets``): nDCG@10
and all-support@5. Every variant is a grid point (vector weight, pivot); pivot 0 is today's
fusion.
"""

from __future__ import annotations

import argparse
from itertools import product
from pathlib import Path

from answers_paraphrased import open_index
from paraphrase_overlap import SETS, flat, load
from ragwright.evaluation import EvalConfig, load_dataset, run_evaluation
from ragwright.pipeline.search.request import SearchRequest


def variants(pivots: list[float], vector_weights: list[float]) -> list[dict[str, float]]:
    return [
        {"vector_weight": weight, "lexical_pivot": pivot}
        for weight, pivot in product(vector_weights, pivots)
    ]


def label(settings: dict[str, float]) -> str:
    return f"vw{settings['vector_weight']:g}_lp{settings['lexical_pivot']:g}"


def paraphrased(cache: Path, split: str, grid: list[dict[str, float]]) -> None:
    for name in SETS:
        rows = [r for r in load(name) if r["split"] == split and r["evidence"]]
        index = open_index(name, cache)
        for settings in grid:
            request = SearchRequest(top_k=10).with_settings(settings)
            found = [0, 0, 0]
            for row in rows:
                evidence = flat(row["evidence"])
                texts = [flat(hit.text) for hit in index.search(row["question"], request)]
                for slot, depth in enumerate((1, 5, 10)):
                    found[slot] += any(evidence in text for text in texts[:depth])
            print(
                f"{name} {split} {label(settings):10s} @1 {found[0]:2d} @5 {found[1]:2d} "
                f"@10 {found[2]:2d} of {len(rows)}",
                flush=True,
            )


def beir(label_: str, dataset: Path, split: str, cache: Path, grid: list[dict[str, float]]) -> None:
    configs = [EvalConfig.from_mapping({"name": label(s), **s}) for s in grid]
    report = run_evaluation(load_dataset(dataset, split), configs, cache_dir=cache)
    for result in report.results:
        metrics = result.metrics
        print(
            f"{label_} {result.config.name:10s} nDCG@10 {metrics.ndcg_at_10:.4f} "
            f"AS@5 {metrics.all_support_at_5:.4f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, help="the paraphrased sets' indexes")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--pivot", type=float, action="append")
    parser.add_argument("--vector-weight", type=float, action="append")
    parser.add_argument("--datasets", type=Path, default=Path("/work/shared/datasets"))
    parser.add_argument("--scifact-cache", type=Path)
    parser.add_argument("--scifact-split", choices=("train", "test"), default="train")
    parser.add_argument("--hotpot-cache", type=Path)
    args = parser.parse_args()
    grid = variants(args.pivot or [0.0, 0.4, 0.6, 0.8], args.vector_weight or [1.0])
    if args.cache_dir:
        paraphrased(args.cache_dir, args.split, grid)
    if args.scifact_cache:
        scifact = args.datasets / "scifact"
        beir(f"scifact-{args.scifact_split}", scifact, args.scifact_split, args.scifact_cache, grid)
    if args.hotpot_cache:
        beir("hotpot", args.datasets / "hotpotqa-dev500", "test", args.hotpot_cache, grid)


if __name__ == "__main__":
    main()
