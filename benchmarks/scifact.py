"""BEIR SciFact retrieval quality per mode: nDCG@10, Recall@10, MRR@10.

    .venv/bin/python benchmarks/scifact.py [--split test] [--chunking document recursive]

"document" is one chunk per document (BEIR parity); other names are ragwright chunkers, whose
chunk hits are aggregated to documents by their best chunk (max).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _scifact_index import build_index, dataset
from ragwright.evaluation.metrics import evaluate
from ragwright.pipeline.search.retrieval import Fusion, Retriever, SearchMode, SearchRequest


def ranked_documents(hits: list, limit: int = 10) -> list[str]:
    """Chunk hits to document ids: each document at the rank of its best chunk."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.source, None)
    return list(seen)[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", default="test")
    parser.add_argument("--chunking", nargs="+", default=["document", "recursive"])
    args = parser.parse_args()
    data = dataset(args.split)
    print(f"SciFact {args.split}: {len(data.corpus)} documents, {len(data.queries)} queries")
    print(f"{'chunking':<10} {'mode':<13} {'nDCG@10':>8} {'R@10':>7} {'MRR@10':>7}")
    for chunking in args.chunking:
        with tempfile.TemporaryDirectory() as tmp:
            store, embedder, _ = build_index(Path(tmp), data, chunking)
            query_ids = list(data.queries)
            vectors = embedder.embed_documents([data.queries[q] for q in query_ids])
            depth = 10 if chunking == "document" else 40
            arms = [
                ("bm25", SearchMode.BM25, Fusion.RRF),
                ("vector", SearchMode.VECTOR, Fusion.RRF),
            ]
            fused = [(f"hybrid/{f.value}", SearchMode.HYBRID, f) for f in Fusion]
            for label, mode, fusion in arms + fused:
                retriever = Retriever(store, embedder)
                request = SearchRequest(mode=mode, top_k=depth, fusion=fusion)
                run = {
                    q: ranked_documents(retriever.search(data.queries[q], request, query_vector=v))
                    for q, v in zip(query_ids, vectors, strict=True)
                }
                s = evaluate(run, data.qrels)
                print(
                    f"{chunking:<10} {label:<13} {s.ndcg_at_10:>8.4f} "
                    f"{s.recall_at_10:>7.4f} {s.mrr_at_10:>7.4f}"
                )
            store.close()


if __name__ == "__main__":
    main()
