"""The SQLite store at scale, on a synthetic collection (made-up words, clustered vectors).

    .venv/bin/python benchmarks/scale.py --chunks 100000 --index /tmp/scale-100k
    .venv/bin/python benchmarks/scale.py --chunks 1000000 --index /tmp/scale-1m   # long
    .venv/bin/python benchmarks/scale.py --phase warm --ann off --chunks 1000000 --index …

The collection is written once (and reused when ``--index`` already holds one: writing a
million chunks takes minutes). Texts are 60–150 words of `_synthetic.Words` (topics with
Zipf-like vocabularies); vectors are a Gaussian mixture (one centre per topic plus noise,
normalized), because hashing-embedder vectors of random words have no structure and
embedding a million texts in Python would dominate the run. Each phase runs in a fresh
process, so its open cost and memory are its own:

- write: chunks per second (documents of 10 chunks, ``--batch`` chunks per transaction),
  file size, the writer's peak RSS;
- cold: open + first hybrid query with no derived files (the vector matrix is built in the
  query; BM25 comes from FTS5 and vectors are exact while their caches build in the
  background), then how long the background builds take, the RSS once they are done and the
  peak;
- warm: open + first hybrid query with the derived files (and its CPU time), how long the
  background work after it takes (checking the files' checksums), then, once it is done,
  the serving RSS after all queries; p50/p95 of vector (through the HNSW graph from
  `ann_choice.MIN_ROWS` chunks), bm25 and hybrid (the `Retriever`'s, query vector given)
  search, and of vector and hybrid search with a 1%- and a 10%-selective metadata filter
  (another bucket each call, so each pays for finding its rows); then, interleaved, numpy
  exact top-10 over the same (memory-mapped) matrix as the floor, exact vector search
  (``ann="off"``) and the store's own, and the recall@10 of the store's vector search
  against exact; whether 1%-filtered searches are exact within the filter
  (`_within_filter`); with ``--seconds``, queries per second of 1 and ``--clients`` threads
  searching half vector, half BM25 (`_throughput`, as `postgres_scale.py` measures them).

The machine may be shared: read the ratios beside the times.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from _synthetic import BUCKETS, CHUNKS_PER_DOCUMENT, Words, bulk_documents
from _throughput import figures as throughput_figures
from _within_filter import within_filter
from ragwright.filters import Filter, eq, parse_filter
from ragwright.models import Chunk, Document, EmbeddingSpace
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.ports import DocumentWrite
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES
from ragwright.testing.embedder import HashingEmbedder
from ragwright.testing.resident import mapped_resident_bytes

DIMENSION = 384
TOPICS = 200
SPREAD = 0.6  # noise around a topic's centre, relative to the centre's unit length


def clustered(topic: np.ndarray, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    vectors = centres[topic] + rng.normal(
        scale=SPREAD / np.sqrt(DIMENSION), size=(topic.size, DIMENSION)
    )
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def centres() -> np.ndarray:
    raw = np.random.default_rng(0).normal(size=(TOPICS, DIMENSION))
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def space() -> EmbeddingSpace:
    return HashingEmbedder(DIMENSION).space  # the store only checks shape and identity


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def current_rss_gb(field: str = "VmRSS") -> float:
    """This process's resident set (``RssFile``: of it, pages of mapped files, which the
    kernel can drop and read again; ``RssAnon``: its own memory)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def write(directory: Path, chunks: int, batch: int) -> dict[str, Any]:
    words = Words(20_000, topics=TOPICS, seed=1)
    rng, middle = np.random.default_rng(1), centres()
    store = SQLiteStore(directory)
    store.bind_space(space())
    writing, written, pending = 0.0, 0, []
    source = bulk_documents(chunks, words, (60, 150))

    def flush(group: list[tuple[Document, list[Chunk], int]]) -> float:
        topics = np.array([t for _, cs, t in group for _ in cs])
        vectors = clustered(topics, rng, middle)
        writes, offset = [], 0
        for document, pieces, _ in group:
            writes.append(DocumentWrite(document, pieces, vectors[offset : offset + len(pieces)]))
            offset += len(pieces)
        started = time.perf_counter()
        store.write(writes)
        return time.perf_counter() - started

    for document, pieces, topic in source:
        pending.append((document, pieces, topic))
        if len(pending) * CHUNKS_PER_DOCUMENT >= batch:
            writing += flush(pending)
            written += len(pending) * CHUNKS_PER_DOCUMENT
            pending = []
            if written % (batch * 50) == 0:
                print(f"  … {written} chunks written", file=sys.stderr, flush=True)
    if pending:
        writing += flush(pending)
        written += len(pending) * CHUNKS_PER_DOCUMENT
    store.close()
    size = sum(p.stat().st_size for p in directory.glob(DATABASE_NAME + "*"))
    return {
        "chunks": written,
        "chunks_per_s": written / writing,
        "file_gb": size / 2**30,
        "writer_peak_rss_gb": peak_rss_gb(),
    }


def queries(count: int) -> Iterator[tuple[str, np.ndarray]]:
    words = Words(20_000, topics=TOPICS, seed=1)
    rng, middle = np.random.default_rng(2), centres()
    pick = random.Random(3)
    for _ in range(count):
        topic = pick.randrange(TOPICS)
        yield words.text(pick.randint(3, 8), topic), clustered(np.array([topic]), rng, middle)[0]


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def delete_derived_files(directory: Path) -> list[str]:
    """Delete the index's derived files; the names of those there were."""
    removed = []
    for suffix in CACHE_SUFFIXES:
        path = directory / (DATABASE_NAME + suffix)
        if path.exists():
            path.unlink()
            removed.append(path.name)
    return removed


def serve(
    directory: Path, count: int, cold: bool, ann: str = "auto", clients: int = 8, seconds: float = 0
) -> dict[str, Any]:
    if cold:
        delete_derived_files(directory)
    asked = list(queries(count))
    started, cpu = time.perf_counter(), time.process_time()
    store = SQLiteStore(directory, create=False, ann=ann)
    retriever = Retriever(store, HashingEmbedder(DIMENSION))
    text, vector = asked[0]
    retriever.search(text, SearchRequest(mode=SearchMode.HYBRID, top_k=10), query_vector=vector)
    result: dict[str, Any] = {"open_first_hybrid_s": time.perf_counter() - started}
    result["open_first_hybrid_cpu_s"] = time.process_time() - cpu
    result["first_bm25_ms"] = timed(lambda: store.keyword_search(asked[1][0], 10))
    if not cold:  # the loops time the served state: the graph loaded, the files checked
        started = time.perf_counter()
        store.wait_for_caches()
        result["caches_ready_s"] = time.perf_counter() - started
    if cold:
        started = time.perf_counter()
        store.wait_for_caches()
        result["background_builds_s"] = time.perf_counter() - started
        result["rss_after_builds_gb"] = current_rss_gb()
        result["peak_rss_gb"] = peak_rss_gb()
        return result
    picks = itertools.count()

    # Another bucket each call, so that no call reuses the row ids the store keeps of the
    # last filter (the two arms of one hybrid search share them).
    def one() -> Filter:
        return eq("bucket", next(picks) % BUCKETS)

    def ten() -> Filter:
        first = next(picks) % 10
        return parse_filter(" or ".join(f"bucket = {b}" for b in range(first, BUCKETS, 10)))

    matrix = store._search._vectors._built.value.blocks[0]  # type: ignore[union-attr]  # the floor's matrix

    def numpy_exact(v: np.ndarray) -> object:
        scores = matrix @ v
        best = np.argpartition(-scores, 9)[:10]
        return best[np.argsort(-scores[best])]

    def request(mode: SearchMode, where: Filter | None = None) -> SearchRequest:
        return SearchRequest(mode=mode, top_k=10, where=where)

    runs: dict[str, Callable[[str, np.ndarray], object]] = {
        "vector": lambda t, v: store.vector_search(v, 10),
        "bm25": lambda t, v: store.keyword_search(t, 10),
        "hybrid": lambda t, v: retriever.search(t, request(SearchMode.HYBRID), query_vector=v),
        "vector 1%": lambda t, v: store.vector_search(v, 10, one()),
        "hybrid 1%": lambda t, v: retriever.search(
            t, request(SearchMode.HYBRID, one()), query_vector=v
        ),
        "vector 10%": lambda t, v: store.vector_search(v, 10, ten()),
        "hybrid 10%": lambda t, v: retriever.search(
            t, request(SearchMode.HYBRID, ten()), query_vector=v
        ),
    }
    result["ann_used"] = store._search._ann is not None  # auto: the graph from MIN_ROWS chunks
    samples = interleaved(runs, asked)
    result["serving_rss_gb"] = current_rss_gb()
    result["serving_rss_file_gb"] = current_rss_gb("RssFile")
    result["serving_rss_anon_gb"] = current_rss_gb("RssAnon")
    result["serving_peak_rss_gb"] = peak_rss_gb()
    resident = mapped_resident_bytes(directory)
    result["serving_rss_by_file_gb"] = {name: n / 2**30 for name, n in resident.items()}
    # Then the floor and exact search (a second store, ann off: it maps the vector file
    # again, so after the serving RSS), interleaved with the store's own vector search.
    exact = SQLiteStore(directory, create=False, ann="off")
    found = []

    def recall(v: np.ndarray) -> object:
        mine = {h.chunk.id for h in store.vector_search(v, 10)}
        found.append(len(mine & {h.chunk.id for h in exact.vector_search(v, 10)}) / 10)
        return found

    samples |= interleaved(
        {
            "numpy exact": lambda t, v: numpy_exact(v),
            "vector exact": lambda t, v: exact.vector_search(v, 10),
            "vector (again)": lambda t, v: store.vector_search(v, 10),
            "vector 10% exact": lambda t, v: exact.vector_search(v, 10, ten()),
        },
        asked,
    )
    for name, values in samples.items():
        result[f"{name} p50_ms"] = float(np.percentile(values, 50))
        result[f"{name} p95_ms"] = float(np.percentile(values, 95))
    for _, vector in asked:
        recall(vector)
    result["vector recall@10 vs exact"] = float(np.mean(found))
    result |= within_filter(store, exact, retriever, asked)
    exact.close()
    if seconds > 0:
        texts, vectors = [t for t, _ in asked], [v for _, v in asked]
        result |= throughput_figures(store, texts, vectors, clients, seconds)
    return result


def interleaved(
    runs: dict[str, Callable[[str, np.ndarray], object]], asked: list[tuple[str, np.ndarray]]
) -> dict[str, list[float]]:
    """Milliseconds per call of each run, the runs taking turns on each query."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for text, vector in asked:
        for name, run in runs.items():
            samples[name].append(timed(lambda r=run, t=text, v=vector: r(t, v)))
    return samples


def phase(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one phase in a fresh process and return what it measured."""
    command = [sys.executable, __file__, "--phase", name, "--index", str(args.index)]
    command += [
        "--chunks",
        str(args.chunks),
        "--queries",
        str(args.queries),
        "--batch",
        str(args.batch),
        "--ann",
        args.ann,
        "--clients",
        str(args.clients),
        "--seconds",
        str(args.seconds),
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--phase", choices=["write", "cold", "warm"])
    parser.add_argument(
        "--ann", choices=["auto", "on", "off"], default="auto", help="the store's ann setting"
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (warm)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=0.0,
        help="per throughput run (warm; 0: none): 1 client, then --clients, each searching "
        "half vector, half BM25",
    )
    args = parser.parse_args()
    if args.phase == "write":
        print(json.dumps(write(args.index, args.chunks, args.batch)))
        return
    if args.phase in ("cold", "warm"):
        cold = args.phase == "cold"
        served = serve(args.index, args.queries, cold, args.ann, args.clients, args.seconds)
        print(json.dumps(served))
        return
    if not (args.index / DATABASE_NAME).is_file():
        report("write", phase("write", args))
    report("cold (no derived files)", phase("cold", args))
    report("warm (derived files)", phase("warm", args))


def report(title: str, figures: dict[str, Any]) -> None:
    print(f"== {title}")
    floor = figures.get("numpy exact p50_ms")
    for key, value in figures.items():
        ratio = f"   ({value / floor:.1f}x numpy exact)" if floor and key.endswith("p50_ms") else ""
        print(
            f"{key:<38} {value:10.3f}{ratio}" if isinstance(value, float) else f"{key:<38} {value}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
