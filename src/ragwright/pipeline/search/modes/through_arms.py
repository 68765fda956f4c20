"""`ArmMode`: a mode that is a choice of arms (BM25, vector, sparse, or hybrid's fusion of
them), retrieved by `Retriever` with the caller's permissions joined to the filter, within one
chunking, and embedded again once if a reindex swaps the space mid-search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ragwright.errors import EmbeddingSpaceChanged
from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.request import SearchRequest
from ragwright.pipeline.search.retrieval import Retriever
from ragwright.query.model import QueryProcessor

T = TypeVar("T")


@dataclass(frozen=True)
class ArmMode:
    """A `RetrievalMode` over ``arms``; its scores are raw unless it fuses."""

    name: str
    arms: Arms
    plannable: bool = False

    @property
    def fused(self) -> bool:
        return self.arms.fused

    def unavailable(self, context: SearchContext, caller: Caller) -> str | None:
        if self.arms.sparse and not context.sparse.available:
            return "this index has no sparse term weights (ingest --sparse)"
        return None

    def search(
        self,
        context: SearchContext,
        query: str,
        request: SearchRequest,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        request = scoped(request)
        if context.store.space is None or not query.strip():
            return []
        one_read = self.arms.one_store_call and not query_processors
        return retried(
            context,
            lambda: arm_retriever(context, self.arms, request, query_processors).search(
                query, request, arms=self.arms
            ),
            one_read=one_read,
        )


def scoped(request: SearchRequest) -> SearchRequest:
    """``request`` with its caller's permissions joined to its filter: the store applies both
    in its query."""
    where = request.caller.scope(request.where)
    # The same filter (an unrestricted caller's): no comparison of every field.
    return request if where is request.where else request.but(where=where)


def arm_retriever(
    context: SearchContext,
    arms: Arms,
    request: SearchRequest,
    query_processors: Sequence[QueryProcessor],
) -> Retriever:
    """A `Retriever` for ``arms``: the embedder checked against the space where the query is
    embedded, the sparse arm where ``request`` runs it."""
    embedder = context.checked_embedder() if arms.embeds else context.embedder()
    return Retriever(
        context.store,
        embedder,
        query_processors=query_processors or None,
        sparse=context.sparse.arm(arms.runs_sparse(request.sparse_weight)),
    )


def retried(context: SearchContext, retrieve: Callable[[], T], *, one_read: bool = False) -> T:
    """``retrieve`` within one chunking (a re-chunk swaps every chunk); again, once, when a
    reindex swapped the space after the query was embedded (a second swap within one search
    is the caller's to retry). ``one_read``: ``retrieve`` reads the store once, in one
    snapshot, which holds one chunking by itself (the check's settings read was 4-9% of a
    public BM25 search on SciFact texts, interleaved in one process)."""

    def once_more() -> T:
        try:
            return retrieve()
        except EmbeddingSpaceChanged:
            return retrieve()

    return once_more() if one_read else context.one_chunking.run(once_more)
