"""Retrieval: BM25, dense vectors, or both fused (the default; convex combination of normalized
scores unless reciprocal-rank fusion is asked for).

With query processors, the chain runs first: BM25 searches the processed ``text``, the vector arm
embeds ``dense_text`` (a HyDE passage, say), and each variant (multi-query) is retrieved in the
same mode, every ranking of every query then fused into one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Protocol

from ragwright._surrogates import refuse_surrogates
from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.filters import Filter
from ragwright.models import Arm, Hit
from ragwright.pipeline.fusion import (
    DEFAULT_RRF_K,
    convex_combination,
    reciprocal_rank_fusion,
)
from ragwright.ports import Embedder, KeywordSearch, Vectors, VectorSearch
from ragwright.query import ProcessedQuery, QueryChain, QueryKind, QueryProcessor


class SearchMode(StrEnum):
    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"


#: The most hits one search returns; larger asks are configuration mistakes.
MAX_TOP_K = 100_000


class Fusion(StrEnum):
    RRF = "rrf"
    CONVEX = "convex"


#: Chosen on SciFact train (benchmarks/ablation.py): convex fusion beat RRF at every depth tried.
DEFAULT_FUSION = Fusion.CONVEX


class SearchableStore(VectorSearch, KeywordSearch, Protocol):
    """A store offering both retrieval arms."""


def arm_depth(top_k: int) -> int:
    """How many candidates each arm fetches before fusion, by default."""
    return max(2 * top_k, 20)


class Retriever:
    """Runs a query against a store's arms and returns the best hits, best first."""

    def __init__(
        self,
        store: SearchableStore,
        embedder: Embedder,
        *,
        fusion: Fusion | str = DEFAULT_FUSION,
        rrf_k: int = DEFAULT_RRF_K,
        weights: Mapping[Arm, float] | None = None,
        depth: Callable[[int], int] = arm_depth,
        query_processors: QueryChain | Iterable[QueryProcessor] | None = None,
    ) -> None:
        """``weights`` weigh the arms in fusion (default 1 each); ``depth`` maps top_k to
        the number of candidates each arm fetches for hybrid (or multi-query) search;
        ``query_processors`` (a `QueryChain`, or processors to build one) run before each
        search."""
        if rrf_k <= 0:
            raise ConfigError(f"rrf_k must be positive, got {rrf_k}")
        if weights is not None and any(w < 0 for w in weights.values()):
            raise ConfigError(f"arm weights must not be negative, got {dict(weights)}")
        try:
            self.fusion = Fusion(fusion)
        except ValueError:
            raise ConfigError(f"unknown fusion {fusion!r}; choose rrf or convex") from None
        self.store = store
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.weights = dict(weights) if weights is not None else None
        self.depth = depth
        chain = query_processors
        if chain is not None and not isinstance(chain, QueryChain):
            chain = QueryChain(chain)
        self.query_chain: QueryChain | None = chain if chain else None

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
        hits, _ = self.search_with_notes(
            query,
            mode=mode,
            top_k=top_k,
            where=where,
            min_score=min_score,
            query_vector=query_vector,
        )
        return hits

    def search_with_notes(
        self,
        query: str,
        *,
        mode: SearchMode | str = SearchMode.HYBRID,
        top_k: int = 10,
        where: Filter | None = None,
        min_score: float | None = None,
        query_vector: Vectors | None = None,
    ) -> tuple[list[Hit], ProcessedQuery]:
        """`search`, also returning the processed query: its ``notes`` say what each query
        processor did. Without processors the query comes back as given, with no notes."""
        mode = self.check(mode=mode, top_k=top_k, where=where, min_score=min_score)
        refuse_surrogates(query, "the query")
        self._check_chain(min_score=min_score, query_vector=query_vector)
        processed = ProcessedQuery.of(query)
        if self.query_chain is not None:
            processed = self.query_chain.process(processed)
        hits = self._run(processed, mode, top_k, where, query_vector)
        if min_score is not None:
            hits = [hit for hit in hits if hit.score >= min_score]
        return hits, processed

    @staticmethod
    def check(
        *,
        mode: SearchMode | str,
        top_k: int,
        where: Filter | None = None,
        min_score: float | None = None,
    ) -> SearchMode:
        """Validate search arguments (so mistakes surface even on an empty index)."""
        mode = _mode(mode)
        if not 1 <= top_k <= MAX_TOP_K:
            raise ConfigError(f"top_k must be between 1 and {MAX_TOP_K:,}, got {top_k}")
        if min_score is not None and mode is SearchMode.HYBRID:
            raise UnsupportedScale(
                "min_score compares raw similarity scores, but hybrid search returns a fused "
                "ranking (scale 'rank'); use --mode vector or --mode bm25 with a threshold"
            )
        return mode

    def _check_chain(self, *, min_score: float | None, query_vector: Vectors | None) -> None:
        """Refuse arguments the query processors would make meaningless."""
        kinds = self.query_chain.kinds if self.query_chain is not None else frozenset()
        if min_score is not None and QueryKind.VARIANTS in kinds:
            raise UnsupportedScale(
                "min_score compares raw similarity scores, but a variant expander (multi-query) "
                "fuses several rankings into one (scale 'rank'); drop min_score or the expander"
            )
        if query_vector is not None and QueryKind.DENSE in kinds:
            raise ConfigError(
                "query_vector replaces what the vector arm embeds, and so does the chain's "
                "dense query processor (HyDE); pass one or the other"
            )

    def _run(
        self,
        query: ProcessedQuery,
        mode: SearchMode,
        top_k: int,
        where: Filter | None,
        query_vector: Vectors | None,
    ) -> list[Hit]:
        if mode is not SearchMode.HYBRID and not query.variants:
            return self._rankings(query.text, query.dense_text, mode, top_k, where, query_vector)[0]
        depth = max(self.depth(top_k), top_k)
        rankings = self._rankings(query.text, query.dense_text, mode, depth, where, query_vector)
        for variant in query.variants:
            rankings += self._rankings(variant, variant, mode, depth, where, None)
        if self.fusion is Fusion.CONVEX:
            return convex_combination(rankings, weights=self.weights)[:top_k]
        return reciprocal_rank_fusion(rankings, k=self.rrf_k, weights=self.weights)[:top_k]

    def _rankings(
        self,
        text: str,
        dense_text: str,
        mode: SearchMode,
        top_k: int,
        where: Filter | None,
        query_vector: Vectors | None,
    ) -> list[list[Hit]]:
        """One ranking per arm the mode uses: BM25 over ``text``, vectors for ``dense_text``."""
        rankings: list[list[Hit]] = []
        if mode is not SearchMode.VECTOR:
            rankings.append(self.store.keyword_search(text, top_k, where))
        if mode is not SearchMode.BM25:
            vector = self.embedder.embed_query(dense_text) if query_vector is None else query_vector
            rankings.append(self.store.vector_search(vector, top_k, where))
        return rankings


def _mode(mode: SearchMode | str) -> SearchMode:
    try:
        return SearchMode(mode)
    except ValueError:
        valid = ", ".join(m.value for m in SearchMode)
        raise ConfigError(f"unknown search mode {mode!r}; choose one of {valid}") from None
