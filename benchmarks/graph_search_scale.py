"""Graph search latency at scale, and graph extraction throughput beside plain ingest.

    nice .venv/bin/python benchmarks/graph_search_scale.py [--sizes 10000 100000]
        [--extract 300]

Latency: a synthetic graph shaped like HotpotQA's spaCy graph (per chunk 8 mentions: 5 new
entities and 3 Zipf-chosen older ones; co-occurrence edges between them), p50/p95 of
`GraphSearch.rank` (linking, seeding, personalized PageRank, top chunks: what graph mode adds
to a hybrid search) over 100 queries after one warm-up that builds the cached matrices,
interleaved with an exact numpy vector top-10 over as many 384-d vectors as the baseline
(the machine is noisy: read the ratio).
Throughput: the first ``--extract`` HotpotQA paragraphs ingested through `Index` with the
default MiniLM embedder (chunks/s), then the spaCy extractor over the stored chunks
(chunks/s), in the same process.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ragwright.graph.model import GraphSnapshot
from ragwright.graph.registry import create_extractor
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.index import Index
from ragwright.pipeline.evaluation.dataset import corpus_documents, load_dataset

DATASET = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "hotpotqa-dev500"
MENTIONS_PER_CHUNK = 8
NEW_ENTITIES_PER_CHUNK = 5
QUERIES = 100


def synthetic_snapshot(chunks: int, seed: int = 7) -> GraphSnapshot:
    """A snapshot as `build_snapshot` would make it, built with numpy (building 100k chunks'
    facts in Python would measure the fake, not the search)."""
    rng = np.random.default_rng(seed)
    entities = chunks * NEW_ENTITIES_PER_CHUNK
    chunk_of = np.repeat(np.arange(chunks), MENTIONS_PER_CHUNK)
    fresh = chunk_of * NEW_ENTITIES_PER_CHUNK + np.tile(np.arange(MENTIONS_PER_CHUNK), chunks)
    older = np.maximum(chunk_of * NEW_ENTITIES_PER_CHUNK - rng.zipf(1.3, len(chunk_of)), 0)
    is_fresh = np.tile(np.arange(MENTIONS_PER_CHUNK) < NEW_ENTITIES_PER_CHUNK, chunks)
    entity_of = np.where(is_fresh, fresh, older)
    pairs = np.unique(np.stack([entity_of, chunk_of], axis=1), axis=0)
    sources, targets = [], []
    for offset in range(1, MENTIONS_PER_CHUNK):  # pairs of mentions within a chunk
        left = entity_of.reshape(chunks, -1)[:, :-offset].ravel()
        right = entity_of.reshape(chunks, -1)[:, offset:].ravel()
        sources.append(np.minimum(left, right))
        targets.append(np.maximum(left, right))
    edges = np.unique(np.stack([np.concatenate(sources), np.concatenate(targets)], 1), axis=0)
    edges = edges[edges[:, 0] != edges[:, 1]]
    empty_i, empty_w = np.zeros(0, np.int32), np.zeros(0, np.float32)
    return GraphSnapshot(
        version=f"synthetic-{chunks}",
        entity_keys=tuple(f"entity {e}" for e in range(entities)),
        entity_names=tuple(f"Entity {e}" for e in range(entities)),
        chunk_ids=tuple(f"chunk-{c:07d}" for c in range(chunks)),
        mention_entity=pairs[:, 0].astype(np.int32),
        mention_chunk=pairs[:, 1].astype(np.int32),
        mention_count=np.ones(len(pairs), np.float32),
        edge_source=edges[:, 0].astype(np.int32),
        edge_target=edges[:, 1].astype(np.int32),
        edge_weight=np.full(len(edges), 0.5, np.float32),
        synonym_source=empty_i,
        synonym_target=empty_i,
        synonym_weight=empty_w,
    )


def latency(chunks: int, count: int = QUERIES) -> None:
    snapshot = synthetic_snapshot(chunks)
    search, settings = GraphSearch(), GraphSettings()
    rng = np.random.default_rng(1)
    queries = [
        (f"what links entity {rng.integers(snapshot.entity_count)} and the others?",
         [snapshot.chunk_ids[i] for i in rng.integers(snapshot.chunk_count, size=20)])
        for _ in range(count + 1)
    ]  # fmt: skip
    started = time.perf_counter()
    search.rank(*queries[0], snapshot, settings, 200)
    warm = time.perf_counter() - started
    vectors = rng.standard_normal((chunks, 384), dtype=np.float32)
    graph_ms, exact_ms = [], []
    for text, seeds in queries[1:]:  # interleaved, so both see the same machine load
        started = time.perf_counter()
        search.rank(text, seeds, snapshot, settings, 200)
        graph_ms.append((time.perf_counter() - started) * 1000)
        query = rng.standard_normal(384, dtype=np.float32)
        started = time.perf_counter()
        np.argpartition(-(vectors @ query), 10)[:10]
        exact_ms.append((time.perf_counter() - started) * 1000)
    p50, p95 = np.percentile(graph_ms, [50, 95])
    exact = float(np.median(exact_ms))
    print(f"{chunks:>8,} chunks {snapshot.entity_count:>9,} entities "
          f"{len(snapshot.mention_entity):>9,} mentions {len(snapshot.edge_source):>10,} edges: "
          f"matrices {warm * 1000:.0f} ms, rank p50 {p50:.1f} ms p95 {p95:.1f} ms; exact "
          f"vector top-10 over {chunks:,} x 384 p50 {exact:.1f} ms (rank/exact "
          f"{p50 / exact:.1f}x)", flush=True)  # fmt: skip


def throughput(count: int) -> None:
    data = load_dataset(DATASET)
    documents = list(corpus_documents(data.data))[:count]
    with tempfile.TemporaryDirectory() as folder, Index(Path(folder) / "kb") as index:
        started = time.perf_counter()
        report = index.ingest_documents(documents)
        ingest = time.perf_counter() - started
        chunks = [c for d in index.documents() for c in index.chunks_of(d.id)]
        extractor = create_extractor("spacy")
        extractor.extract(chunks[:8])  # loads the model: not extraction
        started = time.perf_counter()
        extractor.extract(chunks)
        extract = time.perf_counter() - started
    assert report.ok
    print(f"ingest (MiniLM): {len(chunks)} chunks in {ingest:.1f} s = "
          f"{len(chunks) / ingest:.1f} chunks/s; spaCy extraction ({extractor.id}): "
          f"{extract:.1f} s = {len(chunks) / extract:.1f} chunks/s "
          f"({ingest / extract:.1f}x ingest's speed)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--extract", type=int, default=300)
    parser.add_argument("--queries", type=int, default=QUERIES)
    args = parser.parse_args()
    for size in args.sizes:
        latency(size, args.queries)
    if args.extract:
        throughput(args.extract)


if __name__ == "__main__":
    main()
