"""A serving process's first filtered searches on a stored PostgreSQL collection (such as
`postgres_scale.py`'s at 1M chunks) while its metadata index loads, and what the index costs:

    .venv/bin/python benchmarks/postgres_first_filters.py --url postgresql://…

Prints the index's load time and memory (its arrays' bytes, and the process's resident memory
before and after, with the vector and keyword caches off so that only the index loads); then,
in a store whose keyword and vector caches are loaded first, each 1%-filtered hybrid search's
latency (a new ``bucket`` each, as `postgres_scale.py` asks) from its first on, in SQL while
the index loads, until one is answered in process (at most ``--searches``); then
1%-filtered hybrid p50 over filters never seen, with the index and with filters in SQL (the
index taken away), taking turns on each query.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from _synthetic import BUCKETS, Words
from ragwright.filters import eq
from ragwright.pipeline.search.retrieval import Retriever, SearchRequest
from ragwright.stores.postgres import PostgresBackend
from ragwright.testing.embedder import HashingEmbedder


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--collection", default="bench")
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(5)
    words = Words(20_000, topics=200, seed=1)
    texts = [words.text(5, int(rng.integers(200)), share=0.9) for _ in range(args.queries)]

    # Only the index loads: its memory is the process's growth.
    with PostgresBackend(args.url, vector_cache_mb=0, keyword_cache=False) as backend:
        store = backend.open(args.collection)
        index = store._filter_matches.index
        assert index is not None
        before = resident_mb()
        started = time.perf_counter()
        index._load()  # what a filtered search does first (with a cache that ranks matches)
        index.wait()
        seconds = time.perf_counter() - started
        state = index._state
        held = 0 if state is None else state.nbytes / 2**20
        print(f"metadata index: loaded in {seconds:.1f} s; arrays {held:.1f} MB; process "
              f"{before:.0f} -> {resident_mb():.0f} MB resident (load {load()})")  # fmt: skip
        store.close()

    # A fresh store's first filtered hybrid searches, its keyword and vector caches loaded
    # first: the metadata index loads meanwhile.
    with PostgresBackend(args.url, pool_size=4) as backend:
        store = backend.open(args.collection)
        space = store.space
        assert space is not None and store._vector_cache is not None
        embedder = HashingEmbedder(space.dimension)
        retriever = Retriever(store, embedder)
        vectors = embedder.embed_documents(texts)
        matches = store._filter_matches
        index = matches.index
        store.keyword_search(texts[0], 10)
        store._vector_cache._load_all()
        store.wait_for_caches()
        print(f"keyword and vector caches loaded (load {load()})")

        def hybrid(number: int, bucket: int) -> tuple[float, bool]:
            request = SearchRequest(mode="hybrid", top_k=10, where=eq("bucket", bucket))
            in_sql = matches.in_sql
            started = time.perf_counter()
            retriever.search(texts[number], request, query_vector=vectors[number])
            return (time.perf_counter() - started) * 1000, matches.in_sql == in_sql

        first = time.perf_counter()
        loading: list[float] = []
        for number in range(args.searches):
            ms, in_process = hybrid(number % args.queries, (number * 37 + 11) % BUCKETS)
            if in_process:
                after = time.perf_counter() - first
                print(f"  the index answered from search {number + 1} on, {after:.1f} s "
                      f"after the first: {ms:.1f} ms")  # fmt: skip
                break
            if len(loading) < 3:
                print(f"  search {number + 1}: {ms:8.1f} ms, filter in SQL")
            loading.append(ms)
        print(f"  {len(loading)} searches before it, filter in SQL: p50 "
              f"{statistics.median(loading):.1f} ms, max {max(loading):.1f} ms")  # fmt: skip
        store.wait_for_caches()
        print(f"(load {load()})")

        # Filters never seen, with the index and in SQL (the index taken away), taking turns.
        times: dict[str, list[float]] = {"index": [], "SQL": []}
        for number in range(args.queries):
            bucket = (number * 53 + 7) % BUCKETS
            for name in times:
                matches.index = index if name == "index" else None
                times[name].append(hybrid(number, bucket)[0])
        matches.index = index
        for name, values in times.items():
            print(f"1% filtered hybrid p50, filter {name}: {statistics.median(values):.2f} ms")
        print(f"(load {load()})")
        store.close()


if __name__ == "__main__":
    main()
