"""``graph``: hybrid fused by rank with personalized PageRank over the entity graph (see
`ragwright.pipeline.search.graph_retrieval`); served where the graph is built."""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.pipeline.search.arms import HYBRID, Arms
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.modes.through_arms import arm_retriever, retried, scoped
from ragwright.pipeline.search.request import SearchRequest
from ragwright.pipeline.search.search_mode import SearchMode
from ragwright.query.model import QueryProcessor


class GraphMode:
    name = SearchMode.GRAPH.value
    plannable = True
    fused = True
    arms: Arms | None = None

    def unavailable(self, context: SearchContext, caller: Caller) -> str | None:
        # A restricted caller's graph is that of what it may read: it may have no chunk.
        if context.capabilities().graph and context.caller_graphs.has_chunks(caller):
            return None
        return "this index has no entity graph (graph build)"

    def search(
        self,
        context: SearchContext,
        query: str,
        request: SearchRequest,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        request = scoped(request)
        graph = context.caller_graphs.retriever(request.caller, context.store)
        graph.check()  # no graph is an error, even where there is nothing to search
        if context.store.space is None or not query.strip():
            return []
        return retried(
            context,
            lambda: graph.search(
                arm_retriever(context, HYBRID, request, query_processors), query, request
            ),
        )


MODE = GraphMode()
