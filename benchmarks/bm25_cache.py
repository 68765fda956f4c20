"""The BM25 cache against FTS5's own bm25() on BEIR SciFact test: nDCG@10 of both, how many
queries have the same top-10 in the same order, and p50 per query of each.

    .venv/bin/python benchmarks/bm25_cache.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from _scifact_index import DATASET
from bm25_ablation import build
from ragwright.evaluation.metrics import evaluate, load_beir
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.schema import FTS_TOKENIZER


def main() -> None:
    data = load_beir(DATASET, "test")
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), FTS_TOKENIZER, True).close()
        cached = SQLiteStore(tmp, background=False)
        direct = SQLiteStore(tmp, keyword_cache=False)
        runs: dict[str, dict[str, list[str]]] = {"cache": {}, "fts5": {}}
        times: dict[str, list[float]] = {"cache": [], "fts5": []}
        cached.keyword_search("warm up", 10)
        for query_id, text in data.queries.items():
            for name, store in (("cache", cached), ("fts5", direct)):
                started = time.perf_counter()
                hits = store.keyword_search(text, 10)
                times[name].append((time.perf_counter() - started) * 1000)
                runs[name][query_id] = [h.source for h in hits]
        same = sum(runs["cache"][q] == runs["fts5"][q] for q in data.queries)
        print(f"SciFact test, {len(data.queries)} queries; same top-10 in order: {same}")
        for name in runs:
            scores = evaluate(runs[name], data.qrels)
            print(
                f"{name:<6} nDCG@10 {scores.ndcg_at_10:.4f}   R@10 {scores.recall_at_10:.4f}   "
                f"p50 {statistics.median(times[name]):.3f} ms"
            )


if __name__ == "__main__":
    main()
