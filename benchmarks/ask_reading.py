"""What ``ask`` reads on the paraphrased sets: the evidence in the first / first five hits of
the default search, and of the same search with its first 20 hits reordered by the shipped
cross-encoder (what the extractive engine reads by default, ``rerank_depth``), and the
milliseconds of each search.

    nice .venv/bin/python benchmarks/ask_reading.py --set handbook --split dev --cache-dir DIR

The index is `answers_paraphrased.py`'s (the same ``--cache-dir`` reuses it). Both searches run
for each question in turn, after one warm-up search that loads the model: compare their
milliseconds within one run only.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from answers_paraphrased import open_index
from paraphrase_overlap import SETS, flat, load
from ragwright.pipeline.search.request import Reranking

#: The searches compared: keyword options of `Index.search` beside the question.
SEARCHES: dict[str, dict[str, object]] = {
    "search": {},
    "reranked top 20": {"rerank": Reranking("cross-encoder", 20)},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="name", choices=SETS, default="handbook")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args()
    rows = [r for r in load(args.name) if r["split"] == args.split and r["evidence"]]
    firsts = {name: 0 for name in SEARCHES}
    fives = {name: 0 for name in SEARCHES}
    millis: dict[str, list[float]] = {name: [] for name in SEARCHES}
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_index(args.name, args.cache_dir or Path(tmp)) as index,
    ):
        index.search("warm up", top_k=5, mode="hybrid", rerank="cross-encoder")
        for row in rows:
            evidence = flat(row["evidence"])
            for name, options in SEARCHES.items():
                start = time.perf_counter()
                hits = index.search(row["question"], top_k=5, mode="hybrid", **options)  # type: ignore[arg-type]
                millis[name].append((time.perf_counter() - start) * 1000)
                texts = [flat(hit.text) for hit in hits]
                firsts[name] += bool(texts) and evidence in texts[0]
                fives[name] += any(evidence in text for text in texts)
    for name in SEARCHES:
        print(
            f"{args.name} {args.split} {name}: evidence@1 {firsts[name] / len(rows):.3f} "
            f"({firsts[name]}/{len(rows)}), evidence@5 {fives[name] / len(rows):.3f} "
            f"({fives[name]}/{len(rows)}), ms p50 {statistics.median(millis[name]):.0f}"
        )


if __name__ == "__main__":
    main()
