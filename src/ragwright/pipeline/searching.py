"""The search workflow behind `Index.search`, `search_routed` and `plan`: route a ``mode="auto"``
request, check the processors' order, join the caller's permissions to the filter, then run the
request's mode (hybrid and its arms through a `Retriever`, graph mode through a
`GraphRetriever`, global mode over the community reports) within one chunking.

It holds no settings of its own: the index hands it the store's narrow ports and, as callables,
what it makes lazily (the embedder, the mode planner, the global retriever), so a search that
never needs the model never loads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol, Unpack

from ragwright.errors import EmbeddingSpaceChanged
from ragwright.graph.search import GraphSearch
from ragwright.llms.session import LLMSession
from ragwright.models import Hit, Route
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.caller_graphs import CallerGraphs
from ragwright.pipeline.communities import CommunityWorkflow
from ragwright.pipeline.global_retrieval import GlobalRetriever, refuse_filter
from ragwright.pipeline.graph_retrieval import GraphRetriever, ProvenanceReader
from ragwright.pipeline.one_chunking import within_one_chunking
from ragwright.pipeline.per_document import capped, routed
from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.retrieval import Retriever, SearchableStore
from ragwright.pipeline.search_request import SearchMode, SearchOptions, SearchRequest
from ragwright.pipeline.sparse_terms import SparseWorkflow
from ragwright.planner import Capabilities, dispatch, requested
from ragwright.ports import (
    ChunkLookup,
    Embedder,
    GraphSource,
    IndexSettings,
    ModePlanner,
    ResultProcessor,
)
from ragwright.processors.chain import ResultChain
from ragwright.query.model import QueryProcessor


class SearchSource(SearchableStore, ProvenanceReader, ChunkLookup, IndexSettings, Protocol):
    """The collection a search reads: both arms, the rows and documents of hits, the settings
    that say which chunking is current, and its embedding space (none: nothing to search)."""


class Searching:
    """Searches of one collection. ``embedder`` is the index's embedder as it is (a BM25
    search only tokenizes with it); ``checked_embedder`` is the one checked against the
    current space; ``planner`` is the mode planner for a session (None: a new one's)."""

    def __init__(
        self,
        store: SearchSource,
        *,
        embedder: Callable[[], Embedder],
        checked_embedder: Callable[[], Embedder],
        graph: GraphSource | None,
        graph_search: GraphSearch,
        caller_graphs: CallerGraphs | None = None,
        sparse: SparseWorkflow,
        planner: Callable[[LLMSession | None], ModePlanner],
        capabilities: Callable[[], Capabilities],
        communities: Callable[[], CommunityWorkflow],
        global_retriever: Callable[[], GlobalRetriever],
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.checked_embedder = checked_embedder
        self.graph = graph
        self.graph_search = graph_search
        # Each caller's graph: a restricted one walks that of what it may read only.
        self.caller_graphs = caller_graphs or CallerGraphs(graph, graph_search)
        self.sparse = sparse
        self.planner = planner
        self.capabilities = capabilities
        self.communities = communities
        self.global_retriever = global_retriever

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> list[Hit]:
        """`Index.search`."""
        # Made (and so checked) even when there is nothing to search.
        request = (request or SearchRequest()).but(**options)
        configured = [
            spec.build(embedder=self.embedder, store=self.store, documents=self.store)
            for spec in request.processors
        ]
        chain = ResultChain([*configured, *processors])  # refuses a bad order before any work
        caller = request.caller
        if request.mode is SearchMode.AUTO:
            request = routed(request, self.plan(query, caller=caller))
        request, chain = capped(request, chain)
        if request.mode is SearchMode.GLOBAL:
            refuse_restricted(caller, "global search (the community reports)")
            return self._global_search(query, request, chain)
        # The caller's permissions join the user's filter: the store applies both in its query.
        request = request.but(where=caller.scope(request.where))
        graph_mode = request.mode is SearchMode.GRAPH
        graph = self.caller_graphs.retriever(caller, self.store) if graph_mode else None
        if graph is not None:
            graph.check()  # no graph is an error, even where there is nothing to search
        if self.store.space is None or not query.strip():
            return []

        def retrieve() -> list[Hit]:
            try:
                return self._retrieve(query, request, graph, query_processors)
            except EmbeddingSpaceChanged:
                # A reindex swapped the space after the query was embedded: embed it again in
                # the new space, once (a second swap within one search is the caller's to retry).
                return self._retrieve(query, request, graph, query_processors)

        hits = within_one_chunking(self.store, retrieve)  # a re-chunk swaps every chunk
        return ranked(chain.process(query, hits) if chain.processors else hits)

    def search_routed(
        self, query: str, request: SearchRequest | None = None, **options: Unpack[SearchOptions]
    ) -> tuple[Route, list[Hit]]:
        """`Index.search_routed`."""
        request = (request or SearchRequest()).but(**options)
        route = self.route(query, request.mode, None, request.caller)
        return route, self.search(query, routed(request, route))

    def plan(
        self, question: str, *, session: LLMSession | None = None, caller: Caller = EVERYONE
    ) -> Route:
        """`Index.plan`."""
        able = self.capabilities()
        if caller.restricted:  # global answers from reports of every document
            graph = able.graph and self.caller_graphs.has_chunks(caller)  # its own graph's
            able = dataclasses.replace(able, global_search=False, graph=graph)
        return dispatch(self.planner(session).route(question), able)

    def route(
        self, question: str, mode: SearchMode | str, session: LLMSession | None, caller: Caller
    ) -> Route:
        """The route of a search or an answer in ``mode``: the mode itself, or for ``auto``
        the planner's (an answer's ``session`` pays for an LLM classifier)."""
        chosen = SearchRequest().but(mode=mode).mode
        if chosen is not SearchMode.AUTO:
            return requested(chosen)
        return self.plan(question, session=session, caller=caller)

    def _retrieve(
        self,
        query: str,
        request: SearchRequest,
        graph: GraphRetriever | None,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        embedder = self.embedder() if request.mode is SearchMode.BM25 else self.checked_embedder()
        retriever = Retriever(
            self.store,
            embedder,
            query_processors=query_processors or None,
            sparse=self.sparse.arm(request),
        )
        if graph is not None:
            return graph.search(retriever, query, request)
        return retriever.search(query, request)

    def _global_search(self, query: str, request: SearchRequest, chain: ResultChain) -> list[Hit]:
        """Global mode: the chunks the community reports chosen for ``query`` cite."""
        refuse_filter(request.where)
        self.communities().checked_build()
        if self.store.space is None or not query.strip():
            return []
        hits = self.global_retriever().search(query, request.top_k)
        return ranked(chain.process(query, hits) if chain.processors else hits)


def ranked(hits: list[Hit]) -> list[Hit]:
    """``hits`` with their final ranks, from 1."""
    return [dataclasses.replace(hit, rank=rank) for rank, hit in enumerate(hits, start=1)]
