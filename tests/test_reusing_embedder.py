"""The evaluation cache's `ReusingEmbedder` tells progress as a `ReportingEmbedder`: the
reused texts at once, the others as its inner embedder embeds them (in one go when that one
does not tell progress during a call)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragwright.evaluation.vector_reuse import ReusingEmbedder
from ragwright.models import EmbeddingSpace, content_hash
from ragwright.ports import ReportingEmbedder, Vectors
from ragwright.testing import HashingEmbedder

TEXTS = [f"chunk text {i}" for i in range(40)]


class Plain:
    """An embedder without `embed_documents_reporting` (a third-party one)."""

    def __init__(self) -> None:
        self.hashing = HashingEmbedder(16)

    @property
    def space(self) -> EmbeddingSpace:
        return self.hashing.space

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.hashing.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.hashing.embed_query(text)


def _known(texts: Sequence[str]) -> dict[str, Vectors]:
    vectors = HashingEmbedder(16).embed_documents(texts)
    return {content_hash(text): vector for text, vector in zip(texts, vectors, strict=True)}


def test_reused_texts_are_told_at_once_and_the_rest_as_the_inner_embedder_tells() -> None:
    embedder = ReusingEmbedder(HashingEmbedder(16), _known(TEXTS[:4]))
    told: list[int] = []
    vectors = embedder.embed_documents_reporting(TEXTS, told.append)
    assert isinstance(embedder, ReportingEmbedder)
    assert told == [4, 16, 16, 4]  # the hashing embedder tells every 16 texts
    np.testing.assert_allclose(vectors, HashingEmbedder(16).embed_documents(TEXTS), rtol=1e-6)
    assert (embedder.reused, embedder.embedded) == (4, 36)


def test_an_inner_embedder_without_progress_is_told_once_done() -> None:
    embedder = ReusingEmbedder(Plain(), _known(TEXTS[:4]))
    told: list[int] = []
    vectors = embedder.embed_documents_reporting(TEXTS, told.append)
    assert told == [4, 36]
    np.testing.assert_allclose(vectors, HashingEmbedder(16).embed_documents(TEXTS), rtol=1e-6)
