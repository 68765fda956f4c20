"""Deleting the derived files and reopening gives the same results, on a `scale.py` index.

    .venv/bin/python benchmarks/scale.py --phase write --chunks 1000000 --index /tmp/scale-1m
    .venv/bin/python benchmarks/rebuilt_same.py --index /tmp/scale-1m --queries 200

A fresh process opens the index with its derived files (building any that are missing),
waits for them, and records each query's top-10 ids of five searches: the store's vector
search (through the HNSW graph from `ann_choice.MIN_ROWS` chunks), exact vector search
(``ann="off"``), BM25, hybrid (the `Retriever`'s, query vector given) and hybrid with a
1%-selective metadata filter. Then every derived file is deleted and a second fresh process
builds them all again (open + first hybrid, then the background builds, timed, with the RSS
once they are done and the peak) and records the same. Prints, per search, how many lists
are identical (the same ids in the same order), and the mean overlap of the two top-10s.

BM25, exact and filtered searches must be identical. So must the graph's where faiss links
with one thread (`faiss_library` gives it every core but one: one on a 2-core machine); with
more, the order nodes join the graph in varies between builds, so the script also prints each
graph's recall@10 against exact search.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _synthetic import BUCKETS
from ragwright.filters import eq
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.embedder import HashingEmbedder
from scale import DIMENSION, current_rss_gb, delete_derived_files, peak_rss_gb, queries

SEARCHES = ("vector", "vector exact", "bm25", "hybrid", "hybrid 1%")


def record(directory: Path, count: int) -> dict[str, object]:
    """Open the index, let its caches become ready, and take each query's top-10 ids."""
    asked = list(queries(count))
    started = time.perf_counter()
    store = SQLiteStore(directory, create=False)
    retriever = Retriever(store, HashingEmbedder(DIMENSION))
    hybrid = SearchRequest(mode=SearchMode.HYBRID, top_k=10)
    retriever.search(asked[0][0], hybrid, query_vector=asked[0][1])
    opened = time.perf_counter() - started
    started = time.perf_counter()  # the query started every missing cache's build
    store.wait_for_caches()
    ready = time.perf_counter() - started
    rss_ready = current_rss_gb()
    exact = SQLiteStore(directory, create=False, ann="off")
    lists: dict[str, list[list[str]]] = {name: [] for name in SEARCHES}
    for number, (text, vector) in enumerate(asked):
        filtered = SearchRequest(
            mode=SearchMode.HYBRID, top_k=10, where=eq("bucket", number % BUCKETS)
        )
        found = {
            "vector": store.vector_search(vector, 10),
            "vector exact": exact.vector_search(vector, 10),
            "bm25": store.keyword_search(text, 10),
            "hybrid": retriever.search(text, hybrid, query_vector=vector),
            "hybrid 1%": retriever.search(text, filtered, query_vector=vector),
        }
        for name, hits in found.items():
            lists[name].append([hit.chunk.id for hit in hits])
    exact.close()
    store.close()
    return {
        "open_first_hybrid_s": opened,
        "caches_ready_s": ready,
        "rss_ready_gb": rss_ready,
        "peak_rss_gb": peak_rss_gb(),
        "lists": lists,
    }


def overlap(found: list[list[str]], other: list[list[str]]) -> float:
    """The mean share of each top-10 that the other's holds (against exact: recall@10)."""
    return sum(len(set(a) & set(b)) / 10 for a, b in zip(found, other, strict=True)) / len(found)


def compare(before: dict[str, object], after: dict[str, object]) -> None:
    first, second = before["lists"], after["lists"]
    assert isinstance(first, dict) and isinstance(second, dict)
    print(f"{'search':<14} {'identical':>12} {'top-10 overlap':>15}")
    for name in SEARCHES:
        same = sum(a == b for a, b in zip(first[name], second[name], strict=True))
        shared = overlap(first[name], second[name])
        print(f"{name:<14} {same:>6}/{len(first[name]):<5} {shared:>15.4f}")
    for name, lists in (("before", first), ("after", second)):
        found = overlap(lists["vector"], lists["vector exact"])
        print(f"graph recall@10 vs exact, {name}: {found:.4f}")


def in_fresh_process(args: argparse.Namespace) -> dict[str, object]:
    command = [sys.executable, __file__, "--record", "--index", str(args.index)]
    command += ["--queries", str(args.queries)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--record", action="store_true", help="one process's half (internal)")
    args = parser.parse_args()
    if args.record:
        print(json.dumps(record(args.index, args.queries)))
        return
    before = in_fresh_process(args)
    print(f"deleted: {', '.join(delete_derived_files(args.index))}")
    after = in_fresh_process(args)
    for name, run in (("with the files", before), ("rebuilt", after)):
        print(
            f"{name}: open + first hybrid {run['open_first_hybrid_s']:.2f} s, "
            f"caches ready after {run['caches_ready_s']:.1f} s more; RSS then "
            f"{run['rss_ready_gb']:.2f} GB, peak {run['peak_rss_gb']:.2f} GB"
        )
    compare(before, after)


if __name__ == "__main__":
    main()
