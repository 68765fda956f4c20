"""What every framework adapter hands back for a hit: the exact span and how to cite it.

One definition, so a LangChain `Document` and a LlamaIndex node carry the same keys as the
HTTP API's hits (`ragwright.shapes.hit_json`): the document's source and id, the chunk's id
and index, its character offsets in the document's stored text, its page and heading
breadcrumb, the score with its scale, the rank, and a citation a person can follow.
"""

from __future__ import annotations

from typing import Any

from ragwright.errors import ConfigError
from ragwright.federation import Federation
from ragwright.index import Index
from ragwright.models import Hit
from ragwright.pipeline.search.request import SearchRequest

#: What an adapter searches: one index, or several fused by rank.
SearchSource = Index | Federation


def checked_source(source: object) -> SearchSource:
    """``source`` if it is an `Index` or a `Federation`; else a `ConfigError` saying so."""
    if not isinstance(source, Index | Federation):
        raise ConfigError(
            f"a ragwright retriever searches an Index or a Federation, not a "
            f"{type(source).__name__}"
        )
    return source


def search_hits(source: SearchSource, query: str, request: SearchRequest | None) -> list[Hit]:
    """``source``'s hits for ``query`` (``request`` None: the index's ``[search]`` defaults).
    A federated search that left a member out still returns the others' hits, as it does
    everywhere; its warnings are the federation's to report."""
    if isinstance(source, Federation):
        return list(source.search(query, request).hits)
    return source.search(query, request)


def span_metadata(hit: Hit) -> dict[str, Any]:
    chunk = hit.chunk
    page = chunk.metadata.get("page")
    return {
        "source": hit.source,
        "document_id": chunk.document_id,
        "chunk_id": chunk.id,
        "chunk_index": chunk.index,
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "page": page if isinstance(page, int) else None,
        "breadcrumb": str(chunk.metadata.get("breadcrumb", "")),
        "score": hit.score,
        "scale": hit.scale.value,
        "rank": hit.rank,
        "index": hit.index,
        "citation": citation(hit),
    }


def citation(hit: Hit) -> str:
    """``guide.md, p. 3, Setup > Install, chars 120–340`` (page and breadcrumb when known;
    a federated hit is prefixed with its member: ``team: guide.md, …``)."""
    chunk = hit.chunk
    parts = [hit.source]
    page = chunk.metadata.get("page")
    if isinstance(page, int):
        parts.append(f"p. {page}")
    breadcrumb = chunk.metadata.get("breadcrumb")
    if breadcrumb:
        parts.append(str(breadcrumb))
    parts.append(f"chars {chunk.char_start}–{chunk.char_end}")
    text = ", ".join(parts)
    return f"{hit.index}: {text}" if hit.index else text
