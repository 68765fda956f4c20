"""Graph build throughput beside plain ingest, and what the graph costs in storage, on
HotpotQA dev500's paragraphs, in one process (the machine is noisy: read the ratios).

    .venv/bin/python benchmarks/graph_build.py [--documents 4858] [--copies 1]
        [--embedder hashing] [--extractor capitalized]

1. plain ingest (chunk, embed, write) into a fresh index: chunks/s;
2. `graph build` over that index: chunks/s, and the extractor alone on the same chunks
   (what is left is the store's share: checks, evidence rows, triggers, synonym links),
   and synonym linking alone over the same keys;
3. ingest with the graph (facts written in the chunks' transaction) into another index;
4. the database size per chunk with and without the graph (after a WAL checkpoint), and the
   graph snapshot's first (SQL + numpy) and cached read.

``--copies N`` ingests the corpus N times under different sources (more chunks, the same
kind of text) to see the snapshot at scale.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from ragwright import Document, Index
from ragwright.graph.registry import create_extractor
from ragwright.graph.synonyms import synonym_links
from ragwright.stores.sqlite.store import DATABASE_NAME

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "hotpotqa-dev500"


def documents(limit: int, copies: int) -> list[Document]:
    rows = []
    with (CORPUS / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            rows.append(json.loads(line))
            if len(rows) >= limit:
                break
    return [
        Document.from_text(f"{row['_id']}-{copy}.txt", f"{row['title']}\n\n{row['text']}")
        for copy in range(copies)
        for row in rows
    ]


def database_bytes(directory: Path) -> int:
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in directory.glob(DATABASE_NAME + "*"))


def timed(work):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=4858)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--extractor", default="capitalized")
    args = parser.parse_args()
    docs = documents(args.documents, args.copies)
    with tempfile.TemporaryDirectory() as tmp:
        plain_dir, graph_dir = Path(tmp) / "plain", Path(tmp) / "graph"
        with Index(plain_dir, embedder=args.embedder) as kb:
            report, plain_s = timed(lambda: kb.ingestion.documents(docs))
            chunks = report.chunks_written
            plain_bytes = database_bytes(plain_dir)
            extractor = create_extractor(args.extractor)
            built, build_s = timed(lambda: kb.graph.build(extractor))
            stored = [c for d in kb.documents.list() for c in kb.documents.chunks_of(d.id)]
            _, extract_s = timed(lambda: create_extractor(args.extractor).extract(stored))
            graph_bytes = database_bytes(plain_dir)
            snapshot, first_s = timed(lambda: kb.graph.source.graph_snapshot())
            _, cached_s = timed(lambda: kb.graph.source.graph_snapshot())
            keys = list(snapshot.entity_keys)
            _, link_s = timed(lambda: synonym_links(keys, keys))
        with Index(graph_dir, embedder=args.embedder) as kb:
            with_graph, together_s = timed(
                lambda: kb.ingestion.documents(docs, extractor=args.extractor)
            )
    stats = built.stats
    assert stats is not None and with_graph.chunks_extracted == chunks
    print(f"{len(docs):,} documents, {chunks:,} chunks; embedder {args.embedder}, "
          f"extractor {built.extractor}")  # fmt: skip
    print(f"graph: {stats.entities:,} entities, {stats.edges:,} edges, "
          f"{stats.mentions:,} mentions, {stats.relations:,} relations, "
          f"{stats.synonym_links:,} synonym links")  # fmt: skip
    rows = [
        ("plain ingest", plain_s),
        ("graph build (after ingest)", build_s),
        ("  extractor alone", extract_s),
        ("  synonym linking alone", link_s),
        ("ingest with the graph", together_s),
    ]
    for name, seconds in rows:
        print(f"{name:<28} {seconds:8.2f} s  {chunks / seconds:10,.0f} chunks/s")
    print(f"graph build / plain ingest time: {build_s / plain_s:.2f}")
    print(f"ingest with graph / plain ingest time: {together_s / plain_s:.2f}")
    print(f"store's share of graph build: {(build_s - extract_s) / build_s:.0%}")
    extra = (graph_bytes - plain_bytes) / chunks
    print(f"database: {plain_bytes / chunks:,.0f} bytes/chunk plain, "
          f"{graph_bytes / chunks:,.0f} with the graph "
          f"(+{extra:,.0f}, x{graph_bytes / plain_bytes:.2f})")  # fmt: skip
    print(f"snapshot: first {first_s * 1000:.0f} ms ({snapshot.entity_count:,} entities, "
          f"{len(snapshot.mention_entity):,} incidences, {len(snapshot.edge_source):,} edges), "
          f"cached {cached_s * 1000:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
