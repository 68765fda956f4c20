"""Retrieval: BM25, dense vectors, or both fused with reciprocal-rank fusion (the default)."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.filters import Filter
from ragwright.models import Hit
from ragwright.pipeline.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from ragwright.ports import Embedder, KeywordSearch, Vectors, VectorSearch


class SearchMode(StrEnum):
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"


class SearchableStore(VectorSearch, KeywordSearch, Protocol):
    """A store offering both retrieval arms."""


def arm_depth(top_k: int) -> int:
    """How many candidates each arm fetches before fusion."""
    return max(2 * top_k, 20)


class Retriever:
    """Runs a query against a store's arms and returns the best hits, best first."""

    def __init__(
        self, store: SearchableStore, embedder: Embedder, *, rrf_k: int = DEFAULT_RRF_K
    ) -> None:
        if rrf_k <= 0:
            raise ConfigError(f"rrf_k must be positive, got {rrf_k}")
        self.store = store
        self.embedder = embedder
        self.rrf_k = rrf_k

    def search(
        self,
        query: str,
        *,
        mode: SearchMode | str = SearchMode.HYBRID,
        top_k: int = 10,
        where: Filter | None = None,
        min_score: float | None = None,
        query_vector: Vectors | None = None,
    ) -> list[Hit]:
        """Search. ``query_vector`` skips embedding the query (it must come from the index's
        embedder). ``min_score`` applies to raw scores only and is refused for hybrid."""
        mode = _mode(mode)
        if top_k < 1:
            raise ConfigError(f"top_k must be at least 1, got {top_k}")
        if min_score is not None and mode is SearchMode.HYBRID:
            raise UnsupportedScale(
                "min_score compares raw similarity scores, but hybrid search returns a fused "
                "ranking (scale 'rank'); use --mode vector or --mode bm25 with a threshold"
            )
        hits = self._run(query, mode, top_k, where, query_vector)
        if min_score is not None:
            hits = [hit for hit in hits if hit.score >= min_score]
        return hits

    def _run(
        self,
        query: str,
        mode: SearchMode,
        top_k: int,
        where: Filter | None,
        query_vector: Vectors | None,
    ) -> list[Hit]:
        if mode is SearchMode.BM25:
            return self.store.keyword_search(query, top_k, where)
        vector = self.embedder.embed_query(query) if query_vector is None else query_vector
        if mode is SearchMode.VECTOR:
            return self.store.vector_search(vector, top_k, where)
        depth = arm_depth(top_k)
        rankings = [
            self.store.keyword_search(query, depth, where),
            self.store.vector_search(vector, depth, where),
        ]
        return reciprocal_rank_fusion(rankings, k=self.rrf_k)[:top_k]


def _mode(mode: SearchMode | str) -> SearchMode:
    try:
        return SearchMode(mode)
    except ValueError:
        valid = ", ".join(m.value for m in SearchMode)
        raise ConfigError(f"unknown search mode {mode!r}; choose one of {valid}") from None
