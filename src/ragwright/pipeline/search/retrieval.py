"""Retrieval: BM25, dense vectors, or both fused (the default; convex combination of normalized
scores unless reciprocal-rank fusion is asked for).

With query processors, the chain runs first: BM25 searches the processed ``text``, the vector arm
embeds ``dense_text`` (a HyDE passage, say), and each variant (multi-query) is retrieved in the
same mode, every ranking of every query then fused into one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeGuard

from ragwright import tracing
from ragwright._surrogates import refuse_surrogates
from ragwright.errors import ConfigError, UnsupportedScale
from ragwright.models import Arm, Hit
from ragwright.pipeline.search.adaptive_weights import adapted_weights, lexical_match
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.candidate_hybrid import candidate_hybrid, covers
from ragwright.pipeline.search.fusion import fused_hits
from ragwright.pipeline.search.mode_registry import arms_of
from ragwright.pipeline.search.request import (
    DEFAULT_FUSION,
    MAX_TOP_K,
    Fusion,
    SearchMode,
    SearchRequest,
    arm_depth,
)
from ragwright.ports import (
    CandidateSearch,
    Embedder,
    KeywordSearch,
    Vectors,
    VectorSearch,
)
from ragwright.processors.passage_first import PassageFirst
from ragwright.query import ProcessedQuery, QueryChain, QueryKind, QueryProcessor
from ragwright.terms import content_words, holders_in, passage_text

if TYPE_CHECKING:
    from ragwright.pipeline.search.sparse_terms import SparseArm

__all__ = [
    "DEFAULT_FUSION",
    "MAX_TOP_K",
    "Fusion",
    "Retriever",
    "SearchMode",
    "SearchRequest",
    "SearchableStore",
    "arm_depth",
]

#: The request of a search that says nothing but its query.
DEFAULT_REQUEST = SearchRequest()


class SearchableStore(VectorSearch, KeywordSearch, Protocol):
    """A store offering both retrieval arms."""


class Retriever:
    """Runs a query against a store's arms and returns the best hits, best first."""

    def __init__(
        self,
        store: SearchableStore,
        embedder: Embedder,
        *,
        query_processors: QueryChain | Iterable[QueryProcessor] | None = None,
        sparse: SparseArm | None = None,
    ) -> None:
        """``query_processors`` (a `QueryChain`, or processors to build one) run before each
        search; ``sparse`` is the sparse learned-term arm (its store and encoder), for a
        request that runs it (`SearchRequest.sparse`)."""
        self.store = store
        self.embedder = embedder
        # A store that ranks candidates by their ids reads only the rows of the fused top_k.
        self._candidates = store if _ranks_candidates(store) else None
        self.sparse = sparse
        chain = query_processors
        if chain is not None and not isinstance(chain, QueryChain):
            chain = QueryChain(chain)
        self.query_chain: QueryChain | None = chain if chain else None

    def search(
        self,
        query: str,
        request: SearchRequest = DEFAULT_REQUEST,
        *,
        query_vector: Vectors | None = None,
        arms: Arms | None = None,
    ) -> list[Hit]:
        """Search as ``request`` says, over ``arms`` (by default its mode's). ``query_vector``
        skips embedding the query (it must come from the index's embedder)."""
        hits, _ = self.search_with_notes(query, request, query_vector=query_vector, arms=arms)
        return hits

    def search_with_notes(
        self,
        query: str,
        request: SearchRequest = DEFAULT_REQUEST,
        *,
        query_vector: Vectors | None = None,
        arms: Arms | None = None,
    ) -> tuple[list[Hit], ProcessedQuery]:
        """`search`, also returning the processed query: its ``notes`` say what each query
        processor did. Without processors the query comes back as given, with no notes."""
        refuse_surrogates(query, "the query")
        arms = arms or arms_of(request.mode)
        self._check_chain(request, query_vector=query_vector)
        if arms.runs_sparse(request.sparse_weight) and self.sparse is None:
            raise ConfigError(
                "this search runs the sparse arm (mode sparse, or sparse_weight > 0), but the "
                "index has no sparse term weights; build them with ragwright ingest --sparse "
                "splade:FOLDER"
            )
        processed = ProcessedQuery.of(query)
        if self.query_chain is not None:
            processed = self.query_chain.process(processed)
        hits = self._run(processed, request, query_vector, arms)
        if request.min_score is not None:
            hits = [hit for hit in hits if hit.score >= request.min_score]
        return hits, processed

    def _check_chain(self, request: SearchRequest, *, query_vector: Vectors | None) -> None:
        """Refuse arguments the query processors would make meaningless."""
        kinds = self.query_chain.kinds if self.query_chain is not None else frozenset()
        if request.min_score is not None and QueryKind.VARIANTS in kinds:
            raise UnsupportedScale(
                "min_score compares raw similarity scores, but a variant expander (multi-query) "
                "fuses several rankings into one (scale 'fused'); drop min_score or the expander"
            )
        if query_vector is not None and QueryKind.DENSE in kinds:
            raise ConfigError(
                "query_vector replaces what the vector arm embeds, and so does the chain's "
                "dense query processor (HyDE); pass one or the other"
            )

    def _run(
        self,
        query: ProcessedQuery,
        request: SearchRequest,
        query_vector: Vectors | None,
        arms: Arms,
    ) -> list[Hit]:
        if not arms.fused and not query.variants:
            return self._rankings(
                query.text, query.dense_text, request, request.top_k, query_vector, arms
            )[0]
        if self._candidates is not None and not query.variants and covers(request, arms):
            vector = self._vector(query.dense_text, query_vector)
            return candidate_hybrid(self._candidates, query.query, query.text, vector, request)
        depth = request.depth
        rankings = self._rankings(query.text, query.dense_text, request, depth, query_vector, arms)
        for variant in query.variants:
            rankings += self._rankings(variant, variant, request, depth, None, arms)
        with tracing.span(tracing.FUSE, rankings=len(rankings)):
            pivot = request.lexical_pivot
            match = _top_match(query.query, rankings) if pivot else 1.0
            weights = adapted_weights(request.weights, match, pivot)
            fused = fused_hits(rankings, weights, request.normalizer, request.document_share)
        if request.passage:
            step = PassageFirst(request.passage.heading, request.passage.coverage)
            fused = step.first(query.query, fused, request.top_k)
        return fused[: request.top_k]

    def _rankings(
        self,
        text: str,
        dense_text: str,
        request: SearchRequest,
        top_k: int,
        query_vector: Vectors | None,
        arms: Arms,
    ) -> list[list[Hit]]:
        """One ranking per arm: learned terms of ``text`` (the sparse arm alone, or fused in
        by a ``sparse_weight`` > 0), BM25 over ``text``, vectors for ``dense_text``. The
        filter, and BM25 parameters, from ``request``."""
        where = request.where
        rankings: list[list[Hit]] = []
        if arms.runs_sparse(request.sparse_weight):
            assert self.sparse is not None  # checked in search_with_notes
            with tracing.span(tracing.RETRIEVE_SPARSE, top_k=top_k):
                rankings.append(self.sparse.search(text, top_k, where))
        if arms.bm25:
            with tracing.span(tracing.RETRIEVE_BM25, top_k=top_k):
                rankings.append(self.store.keyword_search(text, top_k, where, bm25=request.bm25))
        if arms.vector:
            vector = self._vector(dense_text, query_vector)
            with tracing.span(tracing.RETRIEVE_VECTOR, top_k=top_k):
                rankings.append(self.store.vector_search(vector, top_k, where))
        return rankings

    def _vector(self, dense_text: str, given: Vectors | None) -> Vectors:
        """The query vector: ``given``, or ``dense_text`` embedded."""
        if given is not None:
            return given
        with tracing.span(tracing.EMBED, texts=1, query=True):
            return self.embedder.embed_query(dense_text)


def _top_match(query: str, rankings: Sequence[Sequence[Hit]]) -> float:
    """`lexical_match` of the first hit of the first BM25 ranking (the query's own, not a
    variant's), its words matched as the passage step matches them; 1 when there is none."""
    for ranking in rankings:
        if ranking and ranking[0].arms == {Arm.BM25}:
            question = content_words(query)
            held = holders_in(question, [passage_text(ranking[0].chunk)])
            return lexical_match(question, {word for word, at in held.items() if at})
    return 1.0


def _ranks_candidates(store: object) -> TypeGuard[CandidateSearch]:
    """Whether ``store`` is a `CandidateSearch`, asked once per store class: a protocol's
    isinstance checks every method, and every search makes a `Retriever`."""
    known = _CANDIDATE_STORES.get(type(store))
    if known is None:
        known = _CANDIDATE_STORES[type(store)] = isinstance(store, CandidateSearch)
    return known


_CANDIDATE_STORES: dict[type, bool] = {}
