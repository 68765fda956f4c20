"""Query latency on SciFact (one chunk per document), p50 and p95, per mode.

    .venv/bin/python benchmarks/latency.py [--queries 300] [--rounds 3]

"retrieval" times the retrieval call alone with the query vector given; "end-to-end" includes
embedding the query. The baseline is a bare numpy exact top-10 over the same matrix, timed
interleaved in the same process (the machine is shared and noisy: read the ratios).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from _scifact_index import build_index, dataset
from ragwright.pipeline.search.retrieval import Retriever, SearchMode, SearchRequest


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def timed(call: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = time.perf_counter()
    call(*args, **kwargs)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = dataset("test")
    with tempfile.TemporaryDirectory() as tmp:
        store, embedder, matrix = build_index(Path(tmp), data, "document")
        retriever = Retriever(store, embedder)
        texts = list(data.queries.values())[: args.queries]
        vectors = embedder.embed_documents(texts)

        def bare_numpy(v: np.ndarray) -> object:
            scores = matrix @ v
            best = np.argpartition(-scores, 9)[:10]
            return best[np.argsort(-scores[best])]

        samples: dict[str, list[float]] = {"numpy baseline": []}
        samples.update({f"{m.value} retrieval": [] for m in SearchMode})
        samples.update({f"{m.value} end-to-end": [] for m in SearchMode})
        for _ in range(args.rounds):
            for text, vector in zip(texts, vectors, strict=True):
                samples["numpy baseline"].append(timed(bare_numpy, vector))
                for mode in SearchMode:
                    search, request = retriever.search, SearchRequest(mode=mode, top_k=10)
                    samples[f"{mode.value} retrieval"].append(
                        timed(search, text, request, query_vector=vector)
                    )
                    samples[f"{mode.value} end-to-end"].append(timed(search, text, request))
        baseline = statistics.median(samples["numpy baseline"])
        print(f"SciFact: {len(data.corpus)} chunks, {len(texts)} queries x {args.rounds} rounds")
        print(f"{'measure':<22} {'p50 ms':>8} {'p95 ms':>8} {'p50/baseline':>13}")
        for name, values in samples.items():
            p50 = percentile(values, 50)
            print(f"{name:<22} {p50:>8.3f} {percentile(values, 95):>8.3f} {p50 / baseline:>13.1f}")
        store.close()


if __name__ == "__main__":
    main()
