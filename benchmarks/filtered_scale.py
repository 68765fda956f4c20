"""Filtered search on a scale.py index: the filter's row ids alone, then vector and hybrid
search with a 1%- and a 10%-selective filter (the kept ids cleared before each call, so each
pays for its own), and numpy over 10,000 contiguous rows as a yardstick, interleaved.

    nice -n 10 .venv/bin/python benchmarks/filtered_scale.py /tmp/ann-1m [--ann off]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ragwright.filters import eq, parse_filter
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.embedder import HashingEmbedder
from scale import BUCKETS, DIMENSION, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("index")
    parser.add_argument("--ann", choices=["auto", "on", "off"], default="off")
    parser.add_argument("--queries", type=int, default=10)
    args = parser.parse_args()
    store = SQLiteStore(args.index, create=False, ann=args.ann)
    retriever = Retriever(store, HashingEmbedder(DIMENSION))
    one = eq("bucket", 7)
    ten = parse_filter(" or ".join(f"bucket = {b}" for b in range(0, BUCKETS, 10)))
    asked = list(queries(args.queries + 1))
    store.vector_search(asked[0][1], 10, one)  # loads the derived files
    store.keyword_search(asked[0][0], 10, one)
    names = ("ids 1%", "ids 10%", "vector 1%", "hybrid 1%", "vector 10%", "hybrid 10%")
    out: dict[str, list[float]] = {k: [] for k in (*names, "numpy 10k rows")}
    matrix = store._search._vectors._built.value.blocks[0]  # type: ignore[union-attr]
    for text, vector in asked[1:]:
        for name, where in (("1%", one), ("10%", ten)):
            request = SearchRequest(mode=SearchMode.HYBRID, top_k=10, where=where)
            calls = {
                f"ids {name}": lambda w=where: store._search._matching_rowids(w, -1),
                f"vector {name}": lambda w=where, v=vector: store.vector_search(v, 10, w),
                f"hybrid {name}": lambda r=request, t=text, v=vector: retriever.search(
                    t, r, query_vector=v
                ),
            }
            for key, call in calls.items():
                store._search._last_filter = None
                started = time.perf_counter()
                call()
                out[key].append(time.perf_counter() - started)
        started = time.perf_counter()
        scores = matrix[:10_000] @ vector
        np.argpartition(-scores, 9)[:10]
        out["numpy 10k rows"].append(time.perf_counter() - started)
    for key, values in out.items():
        print(f"{key:<16} p50 {np.percentile(values, 50) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
