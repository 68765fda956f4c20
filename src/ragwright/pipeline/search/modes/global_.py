"""``global``: the community reports ranked for coverage, and the chunks their points cite
(GraphRAG's global search; see `ragwright.pipeline.search.global_retrieval`). Reports are
built from every document, so a restricted caller is refused, and no filter applies."""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.pipeline.permitted import refuse_restricted
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.global_retrieval import refuse_filter
from ragwright.pipeline.search.request import SearchRequest
from ragwright.pipeline.search.search_mode import SearchMode
from ragwright.query.model import QueryProcessor


class GlobalMode:
    name = SearchMode.GLOBAL.value
    plannable = True
    fused = True
    arms: Arms | None = None

    def unavailable(self, context: SearchContext, caller: Caller) -> str | None:
        if not caller.restricted and context.capabilities().global_search:
            return None
        return "this index has no global search (no community reports)"

    def search(
        self,
        context: SearchContext,
        query: str,
        request: SearchRequest,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        refuse_restricted(request.caller, "global search (the community reports)")
        refuse_filter(request.where)
        context.communities().checked_build()
        if context.store.space is None or not query.strip():
            return []
        return context.global_retriever().search(query, request.top_k)


MODE = GlobalMode()
