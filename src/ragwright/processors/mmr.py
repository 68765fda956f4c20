"""Maximal marginal relevance (Carbonell & Goldstein, 1998): trade relevance for diversity.

Hits are picked greedily; each pick maximizes ``λ·cos(query, hit) − (1−λ)·max cos(hit, picked)``,
so a near-duplicate of a hit already picked loses to a slightly less relevant but different one.
``λ = 1`` is pure relevance, ``λ = 0`` pure diversity.

Cost: the store exposes no vector fetch, so MMR embeds the query and every hit's text with the
embedder it is given: one ``embed_query`` and one ``embed_documents`` call of len(hits) texts per
query. With a neural embedder, keep the list short (put `TopN` or a modest retrieval depth
before MMR). Use the index's own embedder so that the similarities mean what retrieval meant.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError
from ragwright.models import Hit
from ragwright.ports import Embedder
from ragwright.processors._args import integer, real

Matrix = npt.NDArray[np.float64]


class MMR:
    """Reorders hits by maximal marginal relevance, keeping at most ``top_n`` (all when None).

    Relevance is the cosine between the query and the hit text embeddings, not the hit's
    retrieval score; the hits themselves (scores and scale included) are returned unchanged,
    only their order and number change. Ties go to the hit ranked earlier.
    """

    name: str = "mmr"
    last: bool = False

    def __init__(self, embedder: Embedder, lambda_: float = 0.7, top_n: int | None = None) -> None:
        if not isinstance(embedder, Embedder):
            raise ConfigError(f"mmr: embedder must be an Embedder; got {type(embedder).__name__}")
        self.embedder = embedder
        self.lambda_ = real("mmr", "lambda_", lambda_, low=0.0, high=1.0)
        self.top_n = None if top_n is None else integer("mmr", "top_n", top_n, minimum=1)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        limit = len(hits) if self.top_n is None else min(self.top_n, len(hits))
        if limit <= 1:
            return hits[:limit]
        query_vector = _unit(np.asarray(self.embedder.embed_query(query), dtype=np.float64))
        texts = [hit.chunk.text for hit in hits]
        vectors = _unit(np.asarray(self.embedder.embed_documents(texts), dtype=np.float64))
        order = select(vectors @ query_vector, vectors @ vectors.T, self.lambda_, limit)
        return [hits[i] for i in order]

    def __repr__(self) -> str:
        return f"MMR(lambda_={self.lambda_:g}, top_n={self.top_n})"


def select(relevance: Matrix, similarity: Matrix, lambda_: float, limit: int) -> list[int]:
    """Indices picked greedily by MMR from a relevance vector and a pairwise similarity matrix."""
    redundancy = np.zeros(len(relevance))  # max similarity to anything picked so far
    available = np.ones(len(relevance), dtype=bool)
    picked: list[int] = []
    for _ in range(limit):
        scores = np.where(available, lambda_ * relevance - (1 - lambda_) * redundancy, -np.inf)
        best = int(np.argmax(scores))  # the first maximum: ties go to the earlier rank
        picked.append(best)
        available[best] = False
        first = len(picked) == 1
        redundancy = similarity[best] if first else np.maximum(redundancy, similarity[best])
    return picked


def _unit(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    result: Matrix = vectors / np.maximum(norms, 1e-12)
    return result
