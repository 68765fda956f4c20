"""HNSW libraries from PyPI side by side, on the clustered synthetic vectors of scale.py.

    nice -n 10 .venv/bin/python benchmarks/ann_libraries.py --vectors 100000
    nice -n 10 .venv/bin/python benchmarks/ann_libraries.py --vectors 1000000 --libraries faiss

For each library (faiss-cpu, usearch, hnswlib; one missing is reported "not installed") the
same graph parameters (M connections, ``--ef-construction``), the same vectors and queries:
build time (``--threads`` threads), serialized size, and per single-query call at a few ef
values the p50 and recall@10 against numpy exact top-10, interleaved with the exact search in
the same loop (the machine is shared: read the ratios). Also whether the library can add and
remove vectors after the build (checked by doing it, not by reading its documentation).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from scale import DIMENSION, TOPICS, centres, clustered

Search = Callable[[np.ndarray, int], np.ndarray]


class Library(Protocol):
    name: str

    def build(self, vectors: np.ndarray, m: int, ef_construction: int, threads: int) -> None: ...
    def searcher(self, ef: int) -> Search: ...
    def size_bytes(self) -> int: ...
    def add_remove(self, vectors: np.ndarray, keys: np.ndarray) -> str: ...


class Faiss:
    name = "faiss-cpu"

    def build(self, vectors: np.ndarray, m: int, ef_construction: int, threads: int) -> None:
        import faiss

        faiss.omp_set_num_threads(threads)
        self.index = faiss.IndexHNSWFlat(vectors.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = ef_construction
        self.index.add(vectors)
        faiss.omp_set_num_threads(1)  # one query per call, as a store serves them

    def searcher(self, ef: int) -> Search:
        import faiss

        params = faiss.SearchParametersHNSW(efSearch=ef)

        def search(query: np.ndarray, k: int) -> np.ndarray:
            _, labels = self.index.search(query.reshape(1, -1), k, params=params)
            return np.asarray(labels[0])

        return search

    def size_bytes(self) -> int:
        import faiss

        return int(faiss.serialize_index(self.index).size)

    def add_remove(self, vectors: np.ndarray, keys: np.ndarray) -> str:
        self.index.add(vectors)
        try:
            self.index.remove_ids(keys)
        except RuntimeError:
            return "add yes; remove no (HNSW cannot remove: mask with an IDSelector)"
        return "add yes; remove yes"


class FaissSQ8(Faiss):
    """What the SQLite store builds (`ann_index`): HNSW over 8-bit codes, a quarter of the
    float vectors' memory (the store rescores the candidates exactly; this does not)."""

    name = "faiss-cpu HNSW,SQ8"

    def build(self, vectors: np.ndarray, m: int, ef_construction: int, threads: int) -> None:
        import faiss

        faiss.omp_set_num_threads(threads)
        self.index = faiss.IndexHNSWSQ(
            vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT
        )
        self.index.hnsw.efConstruction = ef_construction
        self.index.train(vectors[:: max(1, vectors.shape[0] // 50_000)])
        self.index.add(vectors)
        faiss.omp_set_num_threads(1)


class USearch:
    name = "usearch"

    def build(self, vectors: np.ndarray, m: int, ef_construction: int, threads: int) -> None:
        from usearch.index import Index

        self.index = Index(
            ndim=vectors.shape[1], metric="ip", dtype="f32", connectivity=m,
            expansion_add=ef_construction,
        )  # fmt: skip
        self.index.add(np.arange(vectors.shape[0]), vectors, threads=threads)

    def searcher(self, ef: int) -> Search:
        def search(query: np.ndarray, k: int) -> np.ndarray:
            self.index.expansion_search = ef
            return np.asarray(self.index.search(query, k, threads=1).keys)

        return search

    def size_bytes(self) -> int:
        return int(self.index.serialized_length)

    def add_remove(self, vectors: np.ndarray, keys: np.ndarray) -> str:
        start = len(self.index)
        self.index.add(np.arange(start, start + vectors.shape[0]), vectors)
        removed = self.index.remove(keys)
        return f"add yes; remove yes ({int(np.sum(removed))} of {keys.size} removed)"


class Hnswlib:
    name = "hnswlib"

    def build(self, vectors: np.ndarray, m: int, ef_construction: int, threads: int) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=vectors.shape[1])
        self.index.init_index(
            max_elements=vectors.shape[0] * 2, ef_construction=ef_construction, M=m
        )
        self.index.add_items(vectors, np.arange(vectors.shape[0]), num_threads=threads)
        self.index.set_num_threads(1)

    def searcher(self, ef: int) -> Search:
        def search(query: np.ndarray, k: int) -> np.ndarray:
            self.index.set_ef(max(ef, k))
            labels, _ = self.index.knn_query(query, k, num_threads=1)
            return np.asarray(labels[0])

        return search

    def size_bytes(self) -> int:
        return int(self.index.index_file_size())

    def add_remove(self, vectors: np.ndarray, keys: np.ndarray) -> str:
        start = self.index.get_current_count()
        self.index.add_items(vectors, np.arange(start, start + vectors.shape[0]))
        for key in keys.tolist():
            self.index.mark_deleted(key)
        return "add yes (up to max_elements, then resize_index); remove yes (mark_deleted)"


LIBRARIES: dict[str, tuple[str, Callable[[], Any]]] = {
    "faiss": ("faiss", Faiss),
    "faiss-sq8": ("faiss", FaissSQ8),
    "usearch": ("usearch", USearch),
    "hnswlib": ("hnswlib", Hnswlib),
}


def exact_top(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ query
    best = np.argpartition(-scores, k - 1)[:k]
    return best[np.argsort(-scores[best])]


def measure(
    library: Library, vectors: np.ndarray, queries: np.ndarray, args: argparse.Namespace
) -> None:
    started = time.perf_counter()
    library.build(vectors, args.m, args.ef_construction, args.threads)
    build_s = time.perf_counter() - started
    print(
        f"{library.name}: build {build_s:.1f} s, serialized {library.size_bytes() / 2**20:.0f} MiB"
    )
    for ef in args.ef:
        search = library.searcher(ef)
        times, exact_times, found = [], [], 0
        for query in queries:
            started = time.perf_counter()
            approximate = search(query, 10)
            times.append(time.perf_counter() - started)
            started = time.perf_counter()
            truth = exact_top(vectors, query, 10)
            exact_times.append(time.perf_counter() - started)
            found += len(set(approximate.tolist()) & set(truth.tolist()))
        p50, floor = np.percentile(times, 50) * 1000, np.percentile(exact_times, 50) * 1000
        print(
            f"  ef {ef:>4}: p50 {p50:7.3f} ms  p95 {np.percentile(times, 95) * 1000:7.3f} ms  "
            f"recall@10 {found / (10 * len(queries)):.3f}   (numpy exact p50 {floor:.2f} ms, "
            f"{floor / p50:.0f}x slower)"
        )
    rng = np.random.default_rng(9)
    extra = clustered(rng.integers(TOPICS, size=100), rng, centres())
    print(f"  incremental: {library.add_remove(extra, np.arange(10, dtype=np.int64))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--ef", type=int, nargs="+", default=[32, 64, 128, 256])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    args = parser.parse_args()
    rng, middle = np.random.default_rng(1), centres()
    vectors = clustered(rng.integers(TOPICS, size=args.vectors), rng, middle)
    queries = clustered(np.random.default_rng(2).integers(TOPICS, size=args.queries), rng, middle)
    print(
        f"{args.vectors} vectors x {DIMENSION}, {args.queries} queries, M={args.m}, "
        f"ef_construction={args.ef_construction}, {args.threads} build threads"
    )
    for name in args.libraries:
        module, make = LIBRARIES[name]
        if importlib.util.find_spec(module) is None:
            print(f"{name}: not installed")
            continue
        measure(make(), vectors, queries, args)


if __name__ == "__main__":
    main()
