"""What verifying the derived files before use costs: SHA-256 per block (`derived`, version 2)
against version 1's sum and xor of the data's words, and against trusting the file unread.

    .venv/bin/python benchmarks/derived_verification.py --chunks 100000 --index /tmp/verify-100k

The collection is `scale.py`'s (written once, reused when ``--index`` holds one), its derived
files built (the HNSW graph too: ``ann = on``). In one process, the three ways of checking a
mapped file take turns (``--rounds`` rounds, the median of each; the page cache is warm for
all three, so this is the hashing's cost, not the disk's):

- each derived file's check alone (one pass over its data);
- open + the first query of each mode (bm25, vector, hybrid), on a serving store (what the
  CLI and ``serve`` open): a file is verified in the query that first needs it, or (a kind
  with a fallback, over `caches.VERIFIED_IN_QUERY`) in the background while the fallback
  answers; then how long until every background check and build is done;
- search latency once the files are checked (p50 of ``--queries`` queries per mode): the
  check runs once per file and process, so this should not move.

The machine may be shared: read the ratios beside the times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import scale
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore, caches, derived
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES
from ragwright.testing.embedder import HashingEmbedder

_HASHES = derived.Mapped.damage
T = TypeVar("T")


def version_1(mapped: derived.Mapped) -> str | None:
    """Version 1's check: the sum and xor of each array's 64-bit words, a window at a time
    (its result is not compared here: this file records hashes; only its cost counts)."""
    for array in mapped.arrays.values():
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        whole = raw.size // 8 * 8
        for start in range(0, whole, 64 * 2**20):
            words = raw[start : min(start + 64 * 2**20, whole)].view(np.uint64)
            int(np.add.reduce(words, dtype=np.uint64))
            int(np.bitwise_xor.reduce(words))
    return None


def unread(mapped: derived.Mapped) -> str | None:
    """No check at all: the file trusted as it is."""
    return None


CHECKS: dict[str, Callable[[derived.Mapped], str | None]] = {
    "sha256 blocks": _HASHES,
    "v1 sum+xor": version_1,
    "unread": unread,
}


def rotated(items: dict[str, T], turn: int) -> list[tuple[str, T]]:
    """The items, starting at another one each round: no way goes first every time."""
    pairs = list(items.items())
    return pairs[turn % len(pairs) :] + pairs[: turn % len(pairs)]


@contextmanager
def checking_with(check: Callable[[derived.Mapped], str | None]) -> Iterator[None]:
    derived.Mapped.damage = check  # type: ignore[method-assign]
    try:
        yield
    finally:
        derived.Mapped.damage = _HASHES  # type: ignore[method-assign]


def prepare(directory: Path, chunks: int) -> None:
    if not (directory / DATABASE_NAME).is_file():
        print(f"writing {chunks:,} chunks to {directory} …", file=sys.stderr, flush=True)
        scale.write(directory, chunks, batch=2000)
    with SQLiteStore(directory, create=False, background=False) as store:
        store.set_ann("on")
        retriever = Retriever(store, HashingEmbedder(scale.DIMENSION))
        text, vector = next(scale.queries(1))
        for mode in (SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID):
            retriever.search(text, SearchRequest(mode=mode, top_k=10), query_vector=vector)
        store.wait_for_caches()


def files_alone(directory: Path, rounds: int) -> None:
    print("each file's check alone (median ms):")
    for suffix in CACHE_SUFFIXES:
        path = directory / (DATABASE_NAME + suffix)
        mapped = derived.open_arrays(path)
        checks = {name: check for name, check in CHECKS.items() if check is not unread}
        times: dict[str, list[float]] = {name: [] for name in checks}
        for turn in range(rounds):
            for name, check in rotated(checks, turn):
                started = time.perf_counter()
                check(mapped)
                times[name].append((time.perf_counter() - started) * 1000)
        report(f"{path.name} ({path.stat().st_size / 2**20:.0f} MiB)", times)


def search(store: SQLiteStore, mode: SearchMode, text: str, vector: np.ndarray) -> None:
    request = SearchRequest(mode=mode, top_k=10)
    Retriever(store, HashingEmbedder(scale.DIMENSION)).search(text, request, query_vector=vector)


def first_queries(directory: Path, rounds: int) -> None:
    print("open + first query on a serving store, then its background work (median ms):")
    text, vector = next(scale.queries(1))
    for mode in (SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID):
        opened: dict[str, list[float]] = {name: [] for name in CHECKS}
        background: dict[str, list[float]] = {name: [] for name in CHECKS}
        for turn in range(rounds):
            for name, check in rotated(CHECKS, turn):
                with checking_with(check):
                    started = time.perf_counter()
                    store = SQLiteStore(directory, create=False)
                    search(store, mode, text, vector)
                    opened[name].append((time.perf_counter() - started) * 1000)
                    started = time.perf_counter()
                    store.wait_for_caches()
                    background[name].append((time.perf_counter() - started) * 1000)
                    store.close()
        report(f"{mode.value}: open + first query", opened)
        report(f"{mode.value}: background after it", background)


def served(directory: Path, rounds: int, count: int) -> None:
    print(f"search once the files are checked (median of rounds of p50 ms, {count} queries):")
    asked = list(scale.queries(count))
    stores: dict[str, SQLiteStore] = {}
    for name, check in CHECKS.items():
        with checking_with(check):
            stores[name] = SQLiteStore(directory, create=False)
            for mode in (SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID):
                search(stores[name], mode, *asked[0])
            stores[name].wait_for_caches()
    for mode in (SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID):
        p50: dict[str, list[float]] = {name: [] for name in CHECKS}
        for turn in range(rounds):
            for name, store in rotated(stores, turn):
                taken = []
                for text, vector in asked:
                    started = time.perf_counter()
                    search(store, mode, text, vector)
                    taken.append((time.perf_counter() - started) * 1000)
                p50[name].append(statistics.median(taken))
        report(f"{mode.value} p50", p50)
    for store in stores.values():
        store.close()


def report(label: str, times: dict[str, list[float]]) -> None:
    """The medians, and the ratio of the hashes' to each other way's (above 1: slower)."""
    medians = {name: statistics.median(values) for name, values in times.items()}
    hashed = medians["sha256 blocks"]
    cells = "  ".join(f"{name} {value:8.2f}" for name, value in medians.items())
    ratios = "  ".join(
        f"/{name} {hashed / max(value, 1e-9):5.2f}x"
        for name, value in medians.items()
        if name != "sha256 blocks"
    )
    print(f"  {label:36s} {cells}   sha256 {ratios}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    options: Any = parser.parse_args()
    prepare(options.index, options.chunks)
    print(
        f"{options.chunks:,} chunks; VERIFIED_IN_QUERY = {caches.VERIFIED_IN_QUERY / 2**20:.0f} MiB"
    )
    files_alone(options.index, options.rounds)
    first_queries(options.index, options.rounds)
    served(options.index, options.rounds, options.queries)


if __name__ == "__main__":
    main()
