"""The retrieval call against its floors and peers, interleaved in one process, on SciFact.

    nice -n 10 .venv/bin/python benchmarks/peers.py --index /tmp/eval-evalpath/abf3386e8d182200d00c

``--index`` is a SciFact index that `ragwright eval` prepared (MiniLM vectors); it is copied
to a temporary directory first, so the original is never written. Every library gets the
same chunks, and the same query vectors (embedded once, cached in benchmarks/.cache):

- numpy exact: ``matrix @ q`` and argpartition, the floor for exact dense search (with
  one BLAS thread, like everything in the process once ragwright has searched:
  `blas_threads`; ``--blas-default`` measures it with OpenBLAS's threads first), over a copy
  of the vectors in numpy's own memory, and over the store's matrix file mapped as the store
  maps it ("mapped matrix"): on one machine the first took from 0.76 to 1.72 ms p50
  from one process to the next, the second 1.05 to 1.12 in six processes;
- bm25s (stemmed with PyStemmer, English stop words) over the chunk texts, the floor for
  in-process BM25, retrieving in the calling thread (``n_threads=0``, its default: with 1 it
  hands each query to a new one-thread pool, whose start the caller's CPU time misses and
  its wall time pays); "not installed" without it (it is not a dependency of ragwright);
- ragwright's store: vector and bm25 search, and the `Retriever`'s hybrid search (query
  vector given, so no embedding is timed); and the public call, `Index.search` in each mode
  (top 10; the query's vector given by an embedder that looks it up, so again no embedding is
  timed): what a user's search costs, request, routing and final ranks included. Its exact
  vector search scans an 8-bit copy of the matrix (with the ``ann`` extra: `int8_scan`) and
  rescores the candidates, so it can run under the numpy floor, which reads every float32;
- LangChain's InMemoryVectorStore, LlamaIndex's SimpleVectorStore, Haystack's in-memory
  embedding and BM25 retrievers, each only when installed.

Each query runs through every library in turn, starting one further along the list each
query (so no call always follows the one that left its matrix in the CPU caches), and load on
the shared machine hits them all alike: read the ratios, not the milliseconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from _scifact_index import cached_vectors, dataset
from ragwright.embedders import create_embedder
from ragwright.index import Index
from ragwright.pipeline.search.request import PassageWeights
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest
from ragwright.ports import Embedder
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore, derived
from ragwright.stores.sqlite.cache_kinds import VECTORS_SUFFIX

Run = Callable[[str, np.ndarray], object]


def corpus(database: Path) -> tuple[list[str], np.ndarray]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT text, vector FROM chunks ORDER BY rowid").fetchall()
    texts = [r[0] for r in rows]
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
    return texts, np.ascontiguousarray(matrix)


class GivenQueries:
    """The index's embedder, but each query's vector is the one computed before."""

    def __init__(self, embedder: Embedder, vectors: dict[str, np.ndarray]) -> None:
        self.space = embedder.space
        self.vectors = vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("the benchmark only searches")


def numpy_exact(matrix: np.ndarray) -> Run:
    def run(text: str, vector: np.ndarray) -> object:
        scores = matrix @ vector
        best = np.argpartition(-scores, 9)[:10]
        return best[np.argsort(-scores[best])]

    return run


def bm25s_run(texts: list[str]) -> Run:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever.index(tokens, show_progress=False)

    def run(text: str, vector: np.ndarray) -> object:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        return retriever.retrieve(tokens, k=10, show_progress=False, n_threads=0)

    return run


def langchain_run(texts: list[str], matrix: np.ndarray) -> Run:
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class Given(Embeddings):  # the vectors already computed, by position
        def embed_documents(self, items: list[str]) -> list[list[float]]:
            return [matrix[int(i)].tolist() for i in items]

        def embed_query(self, text: str) -> list[float]:
            raise AssertionError("queries are searched by vector")

    store = InMemoryVectorStore(Given())
    store.add_texts([str(i) for i in range(len(texts))])
    return lambda text, vector: store.similarity_search_by_vector(vector.tolist(), k=10)


def llamaindex_run(matrix: np.ndarray) -> Run:
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores import SimpleVectorStore, VectorStoreQuery

    store = SimpleVectorStore()
    store.add([TextNode(id_=str(i), embedding=row.tolist()) for i, row in enumerate(matrix)])
    return lambda text, vector: store.query(
        VectorStoreQuery(query_embedding=vector.tolist(), similarity_top_k=10)
    )


def haystack_runs(texts: list[str], matrix: np.ndarray) -> dict[str, Run]:
    from haystack import Document
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(content=t, embedding=matrix[i].tolist()) for i, t in enumerate(texts)]
    )
    embedding, bm25 = InMemoryEmbeddingRetriever(store, top_k=10), InMemoryBM25Retriever(store)
    return {
        "Haystack in-memory embedding": lambda t, v: embedding.run(query_embedding=v.tolist()),
        "Haystack in-memory BM25": lambda t, v: bm25.run(query=t, top_k=10),
    }


def timed_floor(matrix: np.ndarray, vector: np.ndarray) -> float:
    started = time.perf_counter()
    numpy_exact(matrix)("", vector)
    return (time.perf_counter() - started) * 1000


def installed(*modules: str) -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in modules)
    except ModuleNotFoundError:  # a parent package missing
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--blas-default",
        action="store_true",
        help="first time numpy exact with OpenBLAS's default threads (before any search)",
    )
    args = parser.parse_args()
    data = dataset("test")
    texts_asked = list(data.queries.values())[: args.queries]
    embedder = create_embedder("minilm")
    vectors = cached_vectors(embedder, texts_asked, "scifact-queries")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(args.index / DATABASE_NAME, Path(tmp) / DATABASE_NAME)
        texts, matrix = corpus(Path(tmp) / DATABASE_NAME)
        store = SQLiteStore(tmp, create=False, background=False)
        retriever = Retriever(store, embedder)
        given = GivenQueries(embedder, dict(zip(texts_asked, vectors, strict=True)))
        index = Index(tmp, embedder=given, create=False, read_only=True)  # type: ignore[arg-type]
        hybrid = SearchRequest(mode=SearchMode.HYBRID, top_k=10)
        # The default's passage-first step reads and scores every fused candidate's text.
        no_passage = hybrid.but(passage=PassageWeights(0.0, 0.0))
        runs: dict[str, Run] = {
            "numpy exact": numpy_exact(matrix),
            "ragwright vector": lambda t, v: store.vector_search(v, 10),
            "ragwright bm25": lambda t, v: store.keyword_search(t, 10),
            "ragwright hybrid": lambda t, v: retriever.search(t, hybrid, query_vector=v),
            "ragwright hybrid, no passage step": lambda t, v: retriever.search(
                t, no_passage, query_vector=v
            ),
            "Index.search vector": lambda t, v: index.search(t, mode="vector"),
            "Index.search bm25": lambda t, v: index.search(t, mode="bm25"),
            "Index.search hybrid": lambda t, v: index.search(t),
        }
        missing = []
        optional: list[tuple[str, tuple[str, ...], Callable[[], dict[str, Run]]]] = [
            ("bm25s", ("bm25s", "Stemmer"), lambda: {"bm25s": bm25s_run(texts)}),
            ("LangChain InMemoryVectorStore", ("langchain_core",),
             lambda: {"LangChain InMemoryVectorStore": langchain_run(texts, matrix)}),
            ("LlamaIndex SimpleVectorStore", ("llama_index.core",),
             lambda: {"LlamaIndex SimpleVectorStore": llamaindex_run(matrix)}),
            ("Haystack in-memory", ("haystack",), lambda: haystack_runs(texts, matrix)),
        ]  # fmt: skip
        for name, modules, make in optional:
            if installed(*modules):
                runs |= make()
            else:
                missing.append(name)
        if args.blas_default:
            samples_default = [timed_floor(matrix, v) for v in vectors]
        for run in runs.values():  # warm every cache before timing (ragwright limits BLAS)
            run(texts_asked[0], vectors[0])
        # The same product over the store's own matrix, mapped from its derived file (page
        # cache pages, as the store reads them): the floor on the same memory. The copy above
        # is numpy's own allocation, whose speed varies from process to process.
        mapped = derived.map_arrays(Path(tmp) / (DATABASE_NAME + VECTORS_SUFFIX))
        assert mapped is not None  # the first vector search wrote it
        runs["numpy exact, mapped matrix"] = numpy_exact(np.asarray(mapped.arrays["matrix"]))
        samples: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        order = list(runs.items())
        for _ in range(args.rounds):
            for number, (text, vector) in enumerate(zip(texts_asked, vectors, strict=True)):
                # Each call follows each other one equally often: a call right after one that
                # read the same matrix (or the same rows) would find it in the CPU caches.
                turn = number % len(order)
                for name, run in order[turn:] + order[:turn]:
                    started, spent = time.perf_counter(), time.thread_time()
                    run(text, vector)
                    cpu[name].append((time.thread_time() - spent) * 1000)
                    samples[name].append((time.perf_counter() - started) * 1000)
        index.close()
        store.close()
    if args.blas_default:
        samples["numpy exact, default BLAS threads, before"] = samples_default
    report(samples, len(texts), len(texts_asked), args.rounds)
    # On a loaded machine wall time is mostly waiting for a core: the CPU time this thread
    # spent (every run here computes on the calling thread, BLAS being limited to one) is
    # what the call costs.
    print("\nthe same calls, CPU time of the calling thread")
    report(cpu, len(texts), len(texts_asked), args.rounds)
    for name in missing:
        print(f"{name:<32} not installed")


def report(samples: dict[str, list[float]], chunks: int, queries: int, rounds: int) -> None:
    p50 = {name: float(np.percentile(v, 50)) for name, v in samples.items()}
    floors = [p50[name] for name in ("numpy exact", "numpy exact, mapped matrix") if name in p50]
    bm25_floor = p50.get("bm25s")
    print(f"SciFact: {chunks} chunks, {queries} queries x {rounds} rounds, interleaved")
    print(f"{'retrieval call':<32} {'p50 ms':>8} {'p95 ms':>8}  ratio (to each numpy floor)")
    for name, values in samples.items():
        ratio = "/".join(f"{p50[name] / floor:.2f}" for floor in floors) + "x numpy exact"
        if bm25_floor and "bm25" in name.lower():
            ratio += f", {p50[name] / bm25_floor:.2f}x bm25s"
        if bm25_floor and name in ("ragwright hybrid", "Index.search hybrid"):
            sums = "/".join(f"{p50[name] / (floor + bm25_floor):.2f}" for floor in floors)
            ratio += f", {sums}x (numpy exact + bm25s)"
        print(f"{name:<32} {p50[name]:8.3f} {np.percentile(values, 95):8.3f}  {ratio}")


if __name__ == "__main__":
    main()
