"""The search workflow behind `Index.search` (``kb.searching``, with `search_routed` and `plan`):
route a ``mode="auto"`` request, check the processors' order, then run the request's mode
(`ragwright.pipeline.search.modes`: each joins the caller's permissions to the filter as it
needs) over the collection's `SearchContext`, and the result processors on its hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from ragwright import tracing
from ragwright.llms.session import LLMSession
from ragwright.models import Hit, Route, with_rank
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.mode_registry import mode_names
from ragwright.pipeline.search.modes import retrieval_mode
from ragwright.pipeline.search.per_document import capped, routed
from ragwright.pipeline.search.request import SearchMode, SearchOptions, SearchRequest
from ragwright.pipeline.search.reranking import reranking
from ragwright.planner import dispatch, requested
from ragwright.ports import ResultProcessor
from ragwright.processors.chain import ResultChain
from ragwright.query.model import QueryProcessor

#: The request of a search that says nothing but its query.
DEFAULT_REQUEST = SearchRequest()
#: Requests made from keyword options alone that a `Searching` keeps (see `_from_options`).
_MADE_KEPT = 64
#: The option values such a request is kept for: plain scalars, compared by type and value.
_SCALARS = frozenset({str, int, float, bool, type(None)})


class Searching:
    """Searches of one collection, over its `SearchContext`."""

    def __init__(self, context: SearchContext) -> None:
        self.context = context
        self._made: dict[tuple[tuple[str, type, object], ...], SearchRequest] = {}

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
        request = self._from_options(options) if request is None else request.but(**options)
        with tracing.span(tracing.SEARCH, mode=str(request.mode), top_k=request.top_k) as span:
            hits = self._search(query, request, processors, query_processors)
            span.set("hits", len(hits))
        return hits

    def _from_options(self, options: SearchOptions) -> SearchRequest:
        """The default request with ``options``: kept when they are plain scalars, since
        ``kb.search(q, mode="bm25")`` asks for the same one again and again, and a request is
        a frozen value whose making checks every field (5% of a public BM25 search of SciFact,
        py-spy). Typed keys: ``top_k=True`` is refused where ``top_k=1`` is not."""
        if any(type(value) not in _SCALARS for value in options.values()):
            return DEFAULT_REQUEST.but(**options)
        key = tuple((name, type(value), value) for name, value in options.items())
        made = self._made.get(key)
        if made is None:
            made = DEFAULT_REQUEST.but(**options)  # a bad option raises here, kept nowhere
            if len(self._made) >= _MADE_KEPT:
                self._made.clear()
            self._made[key] = made
        return made

    def _search(
        self,
        query: str,
        request: SearchRequest,
        processors: Sequence[ResultProcessor],
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        store = self.context.store
        configured = [
            spec.build(embedder=self.context.embedder, store=store, documents=store)
            for spec in request.processors
        ]
        chain = ResultChain([*configured, *processors])  # refuses a bad order before any work
        if request.mode is SearchMode.AUTO:
            request = routed(request, self.plan(query, caller=request.caller))
        request, chain = capped(request, chain)
        # Put first in the chain: the reranker orders the candidates, then the cap applies.
        request, chain = reranking(request, chain, self.context.rerankers)
        mode = retrieval_mode(request.mode)
        hits = mode.search(self.context, query, request, query_processors)
        return ranked(chain.process(query, hits) if chain.processors else hits)

    def search_routed(
        self, query: str, request: SearchRequest | None = None, **options: Unpack[SearchOptions]
    ) -> tuple[Route, list[Hit]]:
        """`search`, with the route it took: for ``mode="auto"`` the planner's choice and its
        reason (the surfaces show it), else the mode asked for."""
        request = (request or DEFAULT_REQUEST).but(**options)
        route = self.route(query, request.mode, None, request.caller)
        return route, self.search(query, routed(request, route))

    def plan(
        self, question: str, *, session: LLMSession | None = None, caller: Caller = EVERYONE
    ) -> Route:
        """The route a ``mode="auto"`` search of ``question`` takes: the planner's choice,
        checked against what this index can run (no entity graph or no global search: hybrid,
        the reason says so). An LLM classifier (``[planner] classifier = "llm"``) calls
        ``session.llm``, by default a new request session's (budget, ledger, cache)."""
        return dispatch(
            self.context.planner(session).route(question),
            lambda mode: retrieval_mode(mode).unavailable(self.context, caller),
        )

    def modes_for(self, caller: Caller = EVERYONE) -> list[str]:
        """The modes this collection can serve ``caller`` now: ``auto``, then each other one
        whose needs (an entity graph, community reports, an unrestricted caller) are met."""
        others = [name for name in mode_names() if name != SearchMode.AUTO]
        usable = [n for n in others if retrieval_mode(n).unavailable(self.context, caller) is None]
        return [SearchMode.AUTO.value, *usable]

    def route(
        self, question: str, mode: SearchMode | str, session: LLMSession | None, caller: Caller
    ) -> Route:
        """The route of a search or an answer in ``mode``: the mode itself, or for ``auto``
        the planner's (an answer's ``session`` pays for an LLM classifier)."""
        chosen = DEFAULT_REQUEST.but(mode=mode).mode
        if chosen is not SearchMode.AUTO:
            return requested(chosen)
        return self.plan(question, session=session, caller=caller)


def ranked(hits: list[Hit]) -> list[Hit]:
    """``hits`` with their final ranks, from 1."""
    return [with_rank(hit, rank) for rank, hit in enumerate(hits, start=1)]
