"""Graph search latency at scale, and graph extraction throughput beside plain ingest.

    nice .venv/bin/python benchmarks/graph_search_scale.py [--sizes 10000 100000]
        [--extract 300]

Latency: a synthetic graph shaped like HotpotQA's spaCy graph (per chunk 8 mentions: 5 new
entities and 3 Zipf-chosen older ones; co-occurrence edges between them), p50/p95 of
`GraphSearch.rank` (linking, seeding, the local personalized PageRank, top chunks: what graph
mode adds to a hybrid search) over 100 queries after one warm-up that builds the cached links,
interleaved with an exact numpy vector top-10 over as many 384-d vectors as the baseline
(the machine is noisy: read the ratio). Then, for ``--exact`` of those queries, the exact walk
(power iteration over the whole graph, what graph search ran before) from the same seeds: its
p50, and how many of its top-10 chunks the local walk's top 10 has.
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

from ragwright.evaluation.dataset import corpus_documents, load_dataset
from ragwright.graph.ppr import personalized_pagerank
from ragwright.graph.registry import create_extractor
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.index import Index
from ragwright.models.graph import GraphSnapshot

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


def exact_walk(
    search: GraphSearch, text: str, seeds: list[str], snapshot: GraphSnapshot, top: int
) -> tuple[set[str], set[str], float]:
    """The local and the exact walk's top chunks from the same seeds, and the exact one's ms."""
    settings = GraphSettings()
    local = {chunk for chunk, _ in search.rank(text, seeds, snapshot, settings, top)}
    graph = search._walks.get(snapshot, relation_weight=1.0, synonym_weight=1.0)
    nodes, weights = search._seeds(text, seeds, snapshot, graph, settings)
    dense = np.zeros(graph.nodes, dtype=np.float32)
    np.add.at(dense, nodes, weights.astype(np.float32))
    started = time.perf_counter()
    scores = personalized_pagerank(graph, dense, settings.damping)[graph.entities :]
    elapsed = (time.perf_counter() - started) * 1000
    best = np.argsort(-scores, kind="stable")[:top]
    return local, {snapshot.chunk_ids[row] for row in best if scores[row] > 0}, elapsed


def latency(chunks: int, count: int = QUERIES, exact_count: int = 10) -> None:
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
          f"first rank (builds the links) {warm * 1000:.0f} ms, rank p50 {p50:.1f} ms "
          f"p95 {p95:.1f} ms; exact vector top-10 over {chunks:,} x 384 p50 {exact:.1f} ms "
          f"(rank/exact {p50 / exact:.2f}x)", flush=True)  # fmt: skip
    if not exact_count:
        return
    overlaps, walk_ms = [], []
    for text, seeds in queries[1 : exact_count + 1]:
        local, full, elapsed = exact_walk(search, text, seeds, snapshot, 10)
        overlaps.append(len(local & full) / max(len(full), 1))
        walk_ms.append(elapsed)
    full_p50 = float(np.median(walk_ms))
    print(f"{'':>8} exact walk (power iteration, same seeds) over {exact_count} queries: p50 "
          f"{full_p50:.0f} ms ({full_p50 / p50:.0f}x the local rank); top-10 agreement "
          f"{np.mean(overlaps):.3f}", flush=True)  # fmt: skip


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
    parser.add_argument("--exact", type=int, default=10, help="queries also walked exactly")
    args = parser.parse_args()
    for size in args.sizes:
        latency(size, args.queries, args.exact)
    if args.extract:
        throughput(args.extract)


if __name__ == "__main__":
    main()
