"""Vectors the cache already holds, reused when another index of it is built.

Two chunkings of one corpus share most of their embedded texts: context headers
(`ragwright.chunkers.context_headers`) in BM25's text only change no embedded text, and in
the embedded text they change only the chunks that lacked their title. Embedding is most of an
index build, so a new cached index takes each vector a complete sibling in the same embedding
space holds for the same embedded text (`Chunk.embedded_text`, compared by its SHA-256), and
embeds only the rest. The vectors are the model's for those texts either way, so the index
is the one a build from nothing would make (up to float rounding across batches).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ragwright.index import Index
from ragwright.models import EmbeddingSpace, content_hash
from ragwright.ports import EmbeddedCount, Embedder, ReportingEmbedder, TokenCounter, Vectors

#: Chunks read per page from a sibling index.
PAGE = 2048


class ReusingEmbedder:
    """``inner``, answering from ``known`` (embedded-text hash → vector) where it can."""

    def __init__(self, inner: Embedder, known: dict[str, Vectors]) -> None:
        self.inner = inner
        self.known = known
        #: How many texts were answered from ``known`` and how many embedded.
        self.reused = 0
        self.embedded = 0

    @property
    def space(self) -> EmbeddingSpace:
        return self.inner.space

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.embed_documents_reporting(texts, _ignored)

    def embed_documents_reporting(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        """`embed_documents`, telling ``embedded`` of the reused texts at once and of the
        others as ``inner`` embeds them (in one go when it does not report)."""
        keys = [content_hash(text) for text in texts]
        missing = [i for i, key in enumerate(keys) if key not in self.known]
        rows = np.zeros((len(texts), self.inner.space.dimension), dtype=np.float32)
        if len(missing) < len(texts):
            embedded(len(texts) - len(missing))
        if missing and isinstance(self.inner, ReportingEmbedder):
            missing_texts = [texts[i] for i in missing]
            rows[missing] = self.inner.embed_documents_reporting(missing_texts, embedded)
        elif missing:
            rows[missing] = self.inner.embed_documents([texts[i] for i in missing])
            embedded(len(missing))
        for i, key in enumerate(keys):
            if key in self.known:
                rows[i] = self.known[key]
        self.reused += len(texts) - len(missing)
        self.embedded += len(missing)
        return rows

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


class _CountingReusingEmbedder(ReusingEmbedder):
    """`ReusingEmbedder` for an embedder that counts tokens (so chunkers see the counter)."""

    def __init__(self, inner: Embedder, known: dict[str, Vectors]) -> None:
        assert isinstance(inner, TokenCounter)
        super().__init__(inner, known)
        self.counter: TokenCounter = inner

    @property
    def max_tokens(self) -> int:
        return self.counter.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.counter.count_tokens(text)


def reusing(inner: Embedder, known: dict[str, Vectors]) -> ReusingEmbedder:
    """``inner`` answering from ``known``, a token counter when ``inner`` is one."""
    if isinstance(inner, TokenCounter):
        return _CountingReusingEmbedder(inner, known)
    return ReusingEmbedder(inner, known)


def sibling_vectors(
    folders: Iterable[Path], manifest_name: str, embedder: Embedder
) -> dict[str, Vectors]:
    """Every vector held by the complete cached indexes among ``folders`` whose embedding
    space is ``embedder``'s, by the hash of the text it embeds."""
    space = asdict(embedder.space)
    known: dict[str, Vectors] = {}
    for folder in folders:
        if _same_space(folder / manifest_name, space):
            with Index(folder, embedder=embedder, create=False, read_only=True) as index:
                known.update(_vectors(index))
    return known


def _same_space(manifest: Path, space: dict[str, object]) -> bool:
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(recorded, dict)
        and recorded.get("complete") is True
        and recorded.get("vectors") is True
        and recorded.get("space") == space
    )


def _vectors(index: Index) -> dict[str, Vectors]:
    export, found, after = index.documents.export, {}, None
    while page := export.chunk_page(after, PAGE):
        after = page[-1].id
        vectors = export.chunk_vectors([chunk.id for chunk in page])
        for chunk in page:
            if chunk.id in vectors:
                found[content_hash(chunk.embedded_text)] = vectors[chunk.id]
    return found


def _ignored(count: int) -> None:
    """Progress nobody asked for."""
