"""A LangChain retriever over a ragwright `Index` or `Federation` (``pip install
'ragwright[langchain]'``): each hit becomes a `Document` whose ``page_content`` is the chunk's
exact span and whose ``metadata`` is `spans.span_metadata` (source, offsets, page, breadcrumb,
chunk id, score, citation); ``id`` is the chunk id."""

from __future__ import annotations

from ragwright.errors import MissingDependencyError

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - the extra is in dev
    raise MissingDependencyError(
        "the LangChain retriever", "pip install 'ragwright[langchain]'"
    ) from exc

from ragwright.integrations.spans import SearchSource, search_hits, span_metadata
from ragwright.pipeline.search.request import SearchRequest


class RagwrightRetriever(BaseRetriever):
    """``RagwrightRetriever(source=kb, request=SearchRequest(mode="hybrid", top_k=5))``;
    ``request`` None searches with the index's ``[search]`` defaults. Async calls
    (``ainvoke``) run the search in LangChain's thread pool."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    source: SearchSource
    request: SearchRequest | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(page_content=hit.chunk.text, metadata=span_metadata(hit), id=hit.chunk.id)
            for hit in search_hits(self.source, query, self.request)
        ]
