"""BM25 tokenization ablation on BEIR SciFact: stemming and query stop words, train and test.

    .venv/bin/python benchmarks/bm25_ablation.py

BM25 only (no embedding: vectors are placeholders), one chunk per document, each variant in its
own fresh index. Reports nDCG@10 and Recall@10 per variant and split, and the difference to the
shipped default (Porter stemming, English stop words dropped from queries).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from _scifact_index import DATASET, documents
from ragwright.chunkers import WholeDocumentChunker
from ragwright.evaluation.metrics import evaluate, load_beir
from ragwright.models import EmbeddingSpace
from ragwright.ports import DocumentWrite
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.schema import FTS_TOKENIZER

PLACEHOLDER_SPACE = EmbeddingSpace("none", 1, True, "cosine", "bm25-ablation")
VARIANTS = {
    "porter + stop words (default)": (FTS_TOKENIZER, True),
    "porter, stop words kept": (FTS_TOKENIZER, False),
    "no stemming + stop words": ("unicode61 remove_diacritics 2", True),
    "no stemming, stop words kept": ("unicode61 remove_diacritics 2", False),
}


def build(directory: Path, tokenizer: str, stop_words: bool) -> SQLiteStore:
    store = SQLiteStore(directory, fts_tokenizer=tokenizer, stop_words=stop_words)
    store.bind_space(PLACEHOLDER_SPACE)
    placeholder, chunker = np.ones((1, 1), dtype=np.float32), WholeDocumentChunker()
    writes = [
        DocumentWrite(document, chunker.chunk(document), placeholder)
        for document in documents(load_beir(DATASET, "test"))
    ]
    for start in range(0, len(writes), 1000):
        store.write(writes[start : start + 1000])
    return store


def main() -> None:
    splits = {split: load_beir(DATASET, split) for split in ("train", "test")}
    print(f"{'variant':<32} {'split':<6} {'nDCG@10':>8} {'R@10':>7} {'Δ nDCG':>8}")
    baseline: dict[str, float] = {}
    for name, (tokenizer, stop_words) in VARIANTS.items():
        with tempfile.TemporaryDirectory() as tmp:
            store = build(Path(tmp), tokenizer, stop_words)
            for split, data in splits.items():
                run = {
                    query_id: [hit.source for hit in store.keyword_search(text, 10)]
                    for query_id, text in data.queries.items()
                }
                scores = evaluate(run, data.qrels)
                delta = scores.ndcg_at_10 - baseline.setdefault(split, scores.ndcg_at_10)
                print(
                    f"{name:<32} {split:<6} {scores.ndcg_at_10:>8.4f} "
                    f"{scores.recall_at_10:>7.4f} {delta:>+8.4f}"
                )
            store.close()


if __name__ == "__main__":
    main()
