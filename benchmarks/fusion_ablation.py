"""Fusion and feedback variants on SciFact (train and test) with HotpotQA dev500 beside them.

    nice .venv/bin/python benchmarks/fusion_ablation.py \
        --scifact-cache /tmp/quality-scifact --hotpot-cache /tmp/quality-hotpot [--only NAME…]

Every row is a `ragwright eval` configuration over the default index (recursive chunks,
MiniLM int8, 100 chunks per query, best chunk per document), so the cached indexes are reused
and nothing is embedded but the queries. Each row names every setting it depends on, so the
table does not move when defaults change. Choose on SciFact train; test and HotpotQA are
reported beside it (HotpotQA must not fall). Prints a Markdown table, Δ against the first row.
"""

from __future__ import annotations

import argparse

from _quality_runs import add_dataset_arguments, quality_runs
from ragwright.evaluation import EvalConfig, load_dataset, run_evaluation

#: The settings of the default before issue 16 (convex, chunks fused one by one).
BEFORE: dict[str, object] = {"fusion": "convex", "document_share": 0.0}

# (name, what it changes, settings over BEFORE).
ROWS: list[tuple[str, str, dict[str, object]]] = [
    ("convex", "convex fusion chunk by chunk (the default before)", {}),
    ("share-0.5", "a chunk takes half its document's best score per arm", {"document_share": 0.5}),
    ("share-1", "fusion by document (document_share 1)", {"document_share": 1.0}),
    ("rrf-share-1", "RRF, fused by document", {"fusion": "rrf", "document_share": 1.0}),
    ("zscore", "z-score instead of min-max normalization", {"fusion": "zscore"}),
    (
        "zscore-share-1",
        "z-score, fused by document",
        {"fusion": "zscore", "document_share": 1.0},
    ),
]


def configs(only: list[str] | None) -> list[EvalConfig]:
    rows = [row for row in ROWS if not only or row[0] in only or row[0] == ROWS[0][0]]
    return [
        EvalConfig.from_mapping({**BEFORE, **settings, "name": name}) for name, _, settings in rows
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_dataset_arguments(parser)
    parser.add_argument("--only", nargs="*", help="rows to run (the first always runs)")
    args = parser.parse_args()
    chosen = configs(args.only)
    runs = quality_runs(args, ("train", "test", "hotpot"))
    figures: dict[str, dict[str, tuple[float, float]]] = {}
    for label, path, split, cache in runs:
        report = run_evaluation(load_dataset(path, split), chosen, cache_dir=cache)
        for result in report.results:
            print(f"{label} {result.config.name}: {result.metrics.ndcg_at_10:.4f}", flush=True)
            metrics = result.metrics
            figures.setdefault(result.config.name, {})[label] = (
                metrics.ndcg_at_10,
                metrics.all_support_at_5,
            )
        print(f"{label} done", flush=True)
    base = figures[chosen[0].name]
    print(
        "| variant | changes | SciFact train | Δ | SciFact test | Δ "
        "| HotpotQA nDCG@10 | Δ | all-support@5 | Δ |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    describe = {name: what for name, what, _ in ROWS}
    for config in chosen:
        row = figures[config.name]
        cells = []
        for label, value in (
            ("train", row["train"][0]),
            ("test", row["test"][0]),
            ("hotpot", row["hotpot"][0]),
        ):
            reference = base[label][0]
            cells += [f"{value:.4f}", f"{value - reference:+.4f}"]
        support, reference = row["hotpot"][1], base["hotpot"][1]
        cells += [f"{support:.3f}", f"{support - reference:+.3f}"]
        print(f"| {config.name} | {describe[config.name]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
