"""What the sparse learned-term arm costs in the store: writing the term weights of a synthetic
collection, and search p50 of ``--mode sparse`` and hybrid with the arm fused, against BM25 and
plain hybrid in the same process (queries interleaved; read the ratios, the machine is noisy).

No SPLADE model ships on PyPI, so the weights come from a deterministic stand-in encoder with a
SPLADE-like shape: every word of a text maps to a term id of a 30,522-term vocabulary (BERT's)
plus three "expansion" ids, weighted log(1 + count); a chunk of 15-60 words gets ~60-200 terms,
a query of 3-6 words ~15-25 (real SPLADE documents hold ~100-300). Model inference is not
measured here: that is the model's cost, not the store's.

    nice .venv/bin/python benchmarks/sparse_arm.py --chunks 20000 --queries 200
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from _synthetic import Words, documents
from ragwright import Index
from ragwright.sparse import SparseVector
from ragwright.testing import HashingEmbedder

VOCABULARY = 30_522
EXPANSIONS = 3


class StandInEncoder:
    """A `SparseEncoder` with SPLADE's output shape and no model (see the module docstring)."""

    spec = "standin:synthetic"
    fingerprint = "standin"

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [self.encode_query(text) for text in texts]

    def encode_query(self, text: str) -> SparseVector:
        weights: Counter[int] = Counter()
        for word, count in Counter(text.lower().split()).items():
            digest = hashlib.blake2b(word.encode(), digest_size=16).digest()
            ids = [int.from_bytes(digest[i : i + 4], "little") % VOCABULARY for i in (0, 4, 8, 12)]
            weights[ids[0]] += float(np.log1p(count))
            for expansion in ids[1 : 1 + EXPANSIONS]:
                weights[expansion] += 0.3
        terms = np.array(sorted(weights), dtype=np.int64)
        return SparseVector(terms, np.array([weights[t] for t in terms], dtype=np.float32))


def p50(index: Index, queries: list[str], modes: dict[str, dict[str, object]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in modes}
    for query in queries:  # interleaved: each mode sees the same machine state
        for name, options in modes.items():
            start = time.perf_counter()
            index.search(query, top_k=10, **options)  # type: ignore[arg-type]
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def timed(work: Callable[[], int]) -> tuple[int, float]:
    start = time.perf_counter()
    done = work()
    return done, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    words = Words(20_000, 50, seed=7)
    folder = Path(tempfile.mkdtemp(prefix="sparse-arm-"))
    try:
        with Index(folder / "kb", embedder=HashingEmbedder(64)) as index:
            docs = [document for document, _ in documents(args.chunks, words)]
            _, ingest_s = timed(lambda: len(index.ingestion.documents(docs).added))
            stats = index.documents.stats()
            encoded, build_s = timed(lambda: index.sparse.build(StandInEncoder()))
            print(f"{stats.chunks:,} chunks: ingest {ingest_s:.1f} s (hashing:64 embedder)")
            print(
                f"sparse weights written: {encoded:,} chunks in {build_s:.1f} s "
                f"({encoded / build_s:,.0f} chunks/s, stand-in encoder included)"
            )
            size = sum(p.stat().st_size for p in (folder / "kb").rglob("*") if p.is_file())
            print(f"index size with the sparse arm: {size / 1e6:.1f} MB")
            queries = [words.text(words.rng.randint(3, 6)) for _ in range(args.queries)]
            modes: dict[str, dict[str, object]] = {
                "bm25": {"mode": "bm25"},
                "sparse": {"mode": "sparse"},
                "hybrid": {"mode": "hybrid"},
                "hybrid+sparse": {"mode": "hybrid", "sparse_weight": 1.0},
            }
            p50(index, queries[:10], modes)  # warm the caches
            figures = p50(index, queries, modes)
        print(f"search p50 over {args.queries} queries, top 10 (ms):")
        for name, value in figures.items():
            base = figures["bm25"] if name == "sparse" else figures["hybrid"]
            ratio = f"{value / base:.2f}x {'bm25' if name == 'sparse' else 'hybrid'}"
            shown = ratio if name in ("sparse", "hybrid+sparse") else ""
            print(f"  {name:<14} {value:8.2f}   {shown}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
