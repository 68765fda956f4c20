"""What the SQLite store's delegation to its capability objects costs on the hot search path.

    PYTHONPATH=$PWD/src python benchmarks/store_delegation.py [--queries 300] [--rounds 5]

SciFact's corpus (one chunk per document) with `HashingEmbedder` vectors, searched through the
public `Index.search` (bm25 and vector, k = 10, each query's vector computed before). Run A is
the store as shipped (``store.keyword_search`` → ``store._search.keyword_search``); run B binds
the store's search methods straight to the capability object on the instance, which is the call
path of the store before it delegated. Rounds alternate A and B in this one process; the ratio
is A / B of the medians (1.00: the hop costs nothing measurable). Run against a checkout from
before the split, B is skipped and the absolute times compare across processes.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from _scifact_index import dataset, documents
from ragwright import Index
from ragwright.models import Chunk, chunk_id_for
from ragwright.ports import DocumentWrite
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder


class GivenQueries:
    """The index's embedder, but each query's vector is the one computed before."""

    def __init__(self, embedder: HashingEmbedder, texts: Sequence[str]) -> None:
        self.space = embedder.space
        self.vectors = dict(zip(texts, embedder.embed_documents(list(texts)), strict=True))

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("the benchmark only searches")


def build(directory: Path, embedder: HashingEmbedder) -> None:
    docs = documents(dataset("test"))
    with SQLiteStore(directory, background=False) as store:
        store.bind_space(embedder.space)
        vectors = embedder.embed_documents([d.content for d in docs])
        batch = []
        for document, vector in zip(docs, vectors, strict=True):
            chunk = Chunk(
                chunk_id_for(document.id, 0, document.content),
                document.id,
                0,
                document.content,
                0,
                len(document.content),
            )
            batch.append(DocumentWrite(document, [chunk], vector[None, :]))
        store.write(batch)


def timed(run: Callable[[str], object], texts: Sequence[str]) -> float:
    """Milliseconds per query over ``texts``."""
    started = time.perf_counter()
    for text in texts:
        run(text)
    return (time.perf_counter() - started) * 1000 / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = list(dataset("test").queries.values())[: args.queries]
    embedder = HashingEmbedder(384)
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), embedder)
        index = Index(tmp, embedder=GivenQueries(embedder, texts), create=False)  # type: ignore[arg-type]
        store = index._store
        capability = getattr(store, "_search", None)
        for mode in ("bm25", "vector"):
            timed(lambda t, m=mode: index.search(t, mode=m, top_k=10), texts)  # warm the caches
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for run in ("A", "B") if capability is not None else ("A",):
                if run == "B":  # the pre-delegation call path, on this instance only
                    store.keyword_search = capability.keyword_search  # type: ignore[union-attr]
                    store.vector_search = capability.vector_search  # type: ignore[union-attr]
                for mode in ("bm25", "vector"):
                    search = lambda t, m=mode: index.search(t, mode=m, top_k=10)  # noqa: E731
                    times.setdefault((run, mode), []).append(timed(search, texts))
                if run == "B":
                    del store.keyword_search, store.vector_search
        index.close()
    for mode in ("bm25", "vector"):
        a = statistics.median(times[("A", mode)])
        line = f"Index.search {mode:6}  A {a:.3f} ms/query"
        if ("B", mode) in times:
            b = statistics.median(times[("B", mode)])
            line += f"  B {b:.3f} ms/query  A/B {a / b:.3f}"
        print(line)


if __name__ == "__main__":
    main()
