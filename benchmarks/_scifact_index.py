"""Shared by the SciFact benchmarks: load the dataset, embed it once (cached), build an index.

Vectors are cached in ``benchmarks/.cache`` keyed by the embedder's fingerprint, the corpus and
the chunking, so a second run of any benchmark skips the ~5 minutes of embedding.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import numpy as np

from ragwright.chunkers import create_chunker
from ragwright.embedders import create_embedder
from ragwright.evaluation.dataset import corpus_documents
from ragwright.evaluation.metrics import BeirDataset, load_beir
from ragwright.models import Chunk, Document
from ragwright.ports import DocumentWrite, Embedder, TokenCounter
from ragwright.stores.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parent
DATASET = ROOT.parent.parent / "shared" / "datasets" / "scifact"
CACHE = ROOT / ".cache"


def dataset(split: str = "test") -> BeirDataset:
    if not DATASET.exists():
        sys.exit(f"SciFact not found at {DATASET}")
    return load_beir(DATASET, split)


def documents(data: BeirDataset) -> list[Document]:
    return list(corpus_documents(data))


def chunk_all(docs: list[Document], chunking: str, embedder: Embedder) -> list[list[Chunk]]:
    counter = embedder if isinstance(embedder, TokenCounter) else None
    chunker = create_chunker(chunking, token_counter=counter)
    return [chunker.chunk(d) for d in docs]


def cached_vectors(embedder: Embedder, texts: list[str], label: str) -> np.ndarray:
    key = hashlib.sha256(
        (embedder.space.fingerprint + label + "\0".join(texts)).encode()
    ).hexdigest()[:16]
    path = CACHE / f"vectors-{label}-{key}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False)
    CACHE.mkdir(exist_ok=True)
    print(f"embedding {len(texts)} texts for '{label}' (cached afterwards)...", file=sys.stderr)
    started = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    elapsed = time.perf_counter() - started
    print(f"  {len(texts) / elapsed:.1f} texts/s", file=sys.stderr)
    np.save(path, vectors, allow_pickle=False)
    return vectors


def build_index(
    directory: Path, data: BeirDataset, chunking: str, embedder_spec: str = "minilm"
) -> tuple[SQLiteStore, Embedder, np.ndarray]:
    """An index of the corpus under ``directory`` with the given chunking, and its vectors."""
    embedder = create_embedder(embedder_spec)
    docs = documents(data)
    chunk_lists = chunk_all(docs, chunking, embedder)
    texts = [c.text for chunks in chunk_lists for c in chunks]
    vectors = cached_vectors(embedder, texts, f"scifact-{chunking}")
    store = SQLiteStore(directory)
    store.bind_space(embedder.space)
    writes, start = [], 0
    for document, chunks in zip(docs, chunk_lists, strict=True):
        writes.append(DocumentWrite(document, chunks, vectors[start : start + len(chunks)]))
        start += len(chunks)
    for i in range(0, len(writes), 500):
        store.write(writes[i : i + 500])
    return store, embedder, vectors
