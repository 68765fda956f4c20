"""What the first graph search after a write costs on a SQLite index, at scale.

    nice .venv/bin/python benchmarks/graph_refresh.py [--chunks 100000] [--folder DIR]

Builds (once; kept in ``--folder``) an index of ``--chunks`` one-chunk documents whose graph is
shaped like `graph_search_scale`'s (per chunk 8 mentions, 5 new entities and 3 Zipf-chosen
older ones, co-occurrence relations between them), written through `Index.ingest_documents`
with an extractor that reads those names back from the text. Then, in one process: the cold
snapshot load and walk build, the warm `GraphSearch.rank` p50; and, after each of a few
one-document writes, the snapshot refresh (replayed from the change log), a full read of the
same snapshot by a store opened afresh (what every refresh cost before the log; the two are
checked equal), the walk rebuild and that first rank, beside the steady p50 again (the
machine is noisy: read the ratios).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from ragwright.graph.keys import entity_key
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.index import Index
from ragwright.models import Chunk, Document
from ragwright.models.graph import ChunkFacts, GraphSnapshot, Mention, Relation
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

MENTIONS = 8
NEW = 5
BATCH = 2000
T = TypeVar("T")


class NamesExtractor:
    """Reads back the entity names the synthetic text is made of (``e123`` tokens); relates
    every pair of names in a chunk, as the co-occurrence extractors do."""

    id = "synthetic-names:1"

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        return [self._one(chunk) for chunk in chunks]

    def _one(self, chunk: Chunk) -> ChunkFacts:
        mentions, position = [], 0
        for token in chunk.text.split(" "):
            if token.startswith("e"):
                mentions.append(Mention(position, position + len(token), token,
                                        entity_key(token), "THING"))  # fmt: skip
            position += len(token) + 1
        keys = sorted({m.key for m in mentions})
        relations = tuple(
            Relation(a, b, "co-occurs", 0.5) for i, a in enumerate(keys) for b in keys[i + 1 :]
        )
        return ChunkFacts(chunk.id, self.id, tuple(mentions), relations)


def documents(count: int, start: int = 0, seed: int = 7) -> Iterator[Document]:
    rng = np.random.default_rng(seed + start)
    for number in range(start, start + count):
        fresh = [number * NEW + k for k in range(NEW)]
        older = np.maximum(number * NEW - rng.zipf(1.3, MENTIONS - NEW), 0).tolist()
        names = " ".join(f"e{n}" for n in fresh + older)
        yield Document.from_text(f"doc-{number:07d}.txt", f"note {number} about {names} here")


def timed(work: Callable[..., T], *args: object, **kwargs: object) -> tuple[T, float]:
    started = time.perf_counter()
    result = work(*args, **kwargs)
    return result, (time.perf_counter() - started) * 1000


def build(folder: Path, chunks: int) -> None:
    if (folder / "built").exists():
        return
    with Index(folder, embedder=HashingEmbedder()) as index:
        for start in range(0, chunks, BATCH):
            batch = list(documents(min(BATCH, chunks - start), start))
            assert index.ingest_documents(batch, extractor=NamesExtractor()).ok
            print(f"  built {start + len(batch):,} chunks", flush=True)
    (folder / "built").write_text("ok")


def ranks(index: Index, search: GraphSearch, count: int, seed: int) -> list[float]:
    graph = index.graph
    snapshot = graph.graph_snapshot()
    rng = np.random.default_rng(seed)
    settings = GraphSettings()
    times = []
    for _ in range(count):
        hits = [snapshot.chunk_ids[i] for i in rng.integers(snapshot.chunk_count, size=2)]
        query = f"what links e{rng.integers(snapshot.entity_count)} and the others?"
        _, ms = timed(search.rank, query, hits, graph.graph_snapshot(), settings, 200)
        times.append(ms)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/ragwright-graph-refresh"))
    parser.add_argument("--writes", type=int, default=3)
    args = parser.parse_args()
    folder = args.folder / f"kb-{args.chunks}"
    _, build_ms = timed(build, folder, args.chunks)
    print(f"index of {args.chunks:,} chunks ready in {build_ms / 1000:.0f} s", flush=True)
    with Index(folder, embedder=HashingEmbedder()) as index:
        graph, search = index.graph, GraphSearch()
        snapshot, load_ms = timed(graph.graph_snapshot)
        _, first_ms = timed(ranks, index, search, 1, 0)
        steady = float(np.median(ranks(index, search, 50, 1)))
        print(f"{snapshot.chunk_count:,} chunks {snapshot.entity_count:,} entities "
              f"{len(snapshot.edge_source):,} edges: cold snapshot load {load_ms:.0f} ms, "
              f"first rank (walk build) {first_ms:.0f} ms, steady rank p50 {steady:.1f} ms",
              flush=True)  # fmt: skip
        for write in range(args.writes):
            new = list(documents(1, snapshot.chunk_count + write))  # a new one each run
            _, write_ms = timed(index.ingest_documents, new, extractor=NamesExtractor())
            refreshed, refresh_ms = timed(graph.graph_snapshot)
            whole, whole_ms = timed(read_whole, folder)
            _, first_ms = timed(ranks, index, search, 1, 10 + write)
            steady = float(np.median(ranks(index, search, 20, 20 + write)))
            print(f"write {write + 1}: one document {write_ms:.0f} ms; snapshot refresh "
                  f"{refresh_ms:.0f} ms (a full read, as every refresh was before: "
                  f"{whole_ms:.0f} ms, {whole_ms / max(refresh_ms, 1e-3):.0f}x; same snapshot: "
                  f"{same(refreshed, whole)}), first rank {first_ms:.0f} ms (walk rebuild), "
                  f"steady p50 {steady:.1f} ms; first query after the write "
                  f"{(refresh_ms + first_ms) / steady:.0f}x a steady one", flush=True)  # fmt: skip


def read_whole(folder: Path) -> GraphSnapshot:
    """The snapshot read whole, by a store opened afresh on the same index."""
    store = SQLiteStore(folder)
    try:
        return store.graph_snapshot()
    finally:
        store.close()


def same(first: GraphSnapshot, second: GraphSnapshot) -> bool:
    names = ("version", "entity_keys", "entity_names", "chunk_ids")
    arrays = [f for f in GraphSnapshot.__dataclass_fields__ if f not in (*names, "change")]
    return all(getattr(first, n) == getattr(second, n) for n in names) and all(
        np.array_equal(getattr(first, a), getattr(second, a)) for a in arrays
    )


if __name__ == "__main__":
    main()
