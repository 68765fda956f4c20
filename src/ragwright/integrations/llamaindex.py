"""A LlamaIndex retriever over a ragwright `Index` or `Federation` (``pip install
'ragwright[llamaindex]'``): each hit becomes a `NodeWithScore` whose `TextNode` is the chunk
(id, exact text, ``start_char_idx``/``end_char_idx`` its offsets, its document as the source
relationship) with `spans.span_metadata` as metadata, scored with the hit's score.

Nothing here reaches the network: retrieval calls no tokenizer, no NLTK and no tiktoken (a
test runs it with sockets refused), and LlamaIndex's own data ships in its wheel."""

from __future__ import annotations

from ragwright.errors import MissingDependencyError

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as exc:  # pragma: no cover - the extra is in dev
    raise MissingDependencyError(
        "the LlamaIndex retriever", "pip install 'ragwright[llamaindex]'"
    ) from exc

from ragwright.integrations.spans import (
    SearchSource,
    checked_source,
    search_hits,
    span_metadata,
)
from ragwright.models import Hit
from ragwright.pipeline.search.request import SearchRequest

#: Shown to neither the embedder nor the LLM: positions and scores, not content.
_HIDDEN = ["document_id", "chunk_id", "chunk_index", "char_start", "char_end", "score",
           "scale", "rank", "index"]  # fmt: skip


class RagwrightRetriever(BaseRetriever):
    """``RagwrightRetriever(kb, SearchRequest(top_k=5))``; ``request`` None searches with the
    index's ``[search]`` defaults."""

    def __init__(self, source: SearchSource, request: SearchRequest | None = None) -> None:
        super().__init__()
        self._source = checked_source(source)
        self._request = request

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = search_hits(self._source, query_bundle.query_str, self._request)
        return [NodeWithScore(node=_node(hit), score=hit.score) for hit in hits]


def _node(hit: Hit) -> TextNode:
    chunk = hit.chunk
    return TextNode(
        id_=chunk.id,
        text=chunk.text,
        start_char_idx=chunk.char_start,
        end_char_idx=chunk.char_end,
        metadata=span_metadata(hit),
        excluded_embed_metadata_keys=list(_HIDDEN),
        excluded_llm_metadata_keys=list(_HIDDEN),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk.document_id)},
    )
