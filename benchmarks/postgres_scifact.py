"""SciFact on PostgreSQL against the SQLite store, in one run: nDCG@10 per mode, and the
retrieval call's p50/p95 per mode (query vectors given, so the embedder is not timed).

    .venv/bin/python benchmarks/postgres_scifact.py [--split test] [--cache-dir DIR] [--url URL]

The SQLite index is eval's cached index of the default configuration (built on first use:
several minutes of embedding); it is copied into PostgreSQL with
`ragwright.pipeline.rebuild.migrate` (the same vectors, ids and offsets, nothing re-embedded),
so any difference is the store's.
Quality goes through `Index.search`, the call `ragwright search` and `ragwright eval` make.
Then HNSW is measured on these real vectors: each ``ef_search`` forced through the HNSW index
(``exact_limit=0``), recall@10 against exact search and p50.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from postgres_scale import start_server
from ragwright import Index
from ragwright.evaluation import EvalConfig, build_or_reuse_index, load_dataset
from ragwright.evaluation.scoring import run_queries, score_runs
from ragwright.models import Hit
from ragwright.pipeline.rebuild.migrate import migrate
from ragwright.pipeline.search.request import SearchMode, SearchRequest
from ragwright.pipeline.search.retrieval import Retriever
from ragwright.ports import Store
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.sqlite import SQLiteBackend

DATASET = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"
MODES = (SearchMode.BM25, SearchMode.VECTOR, SearchMode.HYBRID)
EF_SEARCH = (40, 100, 200, 400)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def quality(location: str | Path, dataset: object, mode: SearchMode) -> float:
    config = EvalConfig(name=mode.value, search=SearchRequest(mode=mode, top_k=100))
    with Index(location, create=False) as kb:
        runs = run_queries(kb, dataset.queries, config)  # type: ignore[attr-defined]
    metrics, _ = score_runs(runs, dataset.qrels)  # type: ignore[attr-defined]
    return metrics.ndcg_at_10


def latencies(stores: dict[str, Store], embedder: object, queries: list[str]) -> None:
    """Interleaved per query: every store and mode answers the same query in turn."""
    vectors = embedder.embed_documents(queries)  # type: ignore[attr-defined]
    times: dict[tuple[str, SearchMode], list[float]] = {}
    retrievers = {name: Retriever(store, embedder) for name, store in stores.items()}  # type: ignore[arg-type]
    for text, vector in zip(queries, vectors, strict=True):
        for name, retriever in retrievers.items():
            for mode in MODES:
                started = time.perf_counter()
                retriever.search(text, SearchRequest(mode=mode, top_k=10), query_vector=vector)
                times.setdefault((name, mode), []).append((time.perf_counter() - started) * 1e3)
    print(f"\n{'retrieval call':<22} {'p50 ms':>8} {'p95 ms':>8} {'p50 vs sqlite':>14}")
    for mode in MODES:
        base = statistics.median(times[("sqlite", mode)])
        for name in stores:
            samples = times[(name, mode)]
            print(
                f"{name + ' ' + mode.value:<22} {statistics.median(samples):>8.2f} "
                f"{percentile(samples, 0.95):>8.2f} {statistics.median(samples) / base:>13.2f}x"
            )


def hnsw_sweep(url: str, embedder: object, queries: list[str]) -> None:
    vectors = embedder.embed_documents(queries)  # type: ignore[attr-defined]
    with PostgresBackend(url) as exact_backend, exact_backend.open(create=False) as exact:
        truth = [[h.chunk.id for h in exact.vector_search(v, 10)] for v in vectors]
    print(f"\n{'HNSW (real vectors)':<22} {'recall@10':>10} {'p50 ms':>8}")
    for ef in EF_SEARCH:
        backend = PostgresBackend(url, hnsw_ef_search=ef, exact_limit=0)
        with backend, backend.open(create=False) as store:
            found: list[list[Hit]] = []
            samples = []
            for vector in vectors:
                started = time.perf_counter()
                found.append(store.vector_search(vector, 10))
                samples.append((time.perf_counter() - started) * 1e3)
        recall = statistics.mean(
            len({h.chunk.id for h in hits} & set(t)) / len(t)
            for hits, t in zip(found, truth, strict=True)
        )
        print(f"{'ef_search ' + str(ef):<22} {recall:>10.3f} {statistics.median(samples):>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", default="test")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--url", help="a PostgreSQL database to use (default: a private server)")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset, args.split)
    cached = build_or_reuse_index(dataset, EvalConfig(), args.cache_dir)
    sqlite_dir = cached.info.directory
    embedder = cached.index.embedder
    server = None
    url = args.url
    if url is None:
        server, url = start_server()
    try:
        with (
            SQLiteBackend(sqlite_dir).open(create=False) as source,
            PostgresBackend(url) as backend,
            backend.open() as target,
        ):
            started = time.perf_counter()
            report = migrate(source, target)
            seconds = time.perf_counter() - started
            print(
                f"SciFact {args.split}: {report.documents} documents, {report.chunks} chunks "
                f"copied to PostgreSQL in {seconds:.1f} s ({report.chunks / seconds:,.0f} chunks/s)"
            )
            print(f"\n{'mode':<8} {'sqlite nDCG@10':>15} {'postgres':>9} {'difference':>11}")
            for mode in MODES:
                on_sqlite = quality(sqlite_dir, dataset, mode)
                on_postgres = quality(url, dataset, mode)
                print(
                    f"{mode.value:<8} {on_sqlite:>15.4f} {on_postgres:>9.4f} "
                    f"{on_postgres - on_sqlite:>+11.4f}"
                )
            queries = list(dataset.queries.values())
            latencies({"sqlite": source, "postgres": target}, embedder, queries)
        hnsw_sweep(url, embedder, queries)
    finally:
        cached.close()
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
