"""The entity graph's MCP tools: ``graph_stats`` and ``graph_entity`` (read-only). Entity
names, aliases and mention texts are copied from documents, so they come wrapped as untrusted
document text, like every author-controlled field of the other tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from ragwright.index import Index
from ragwright.mcp_server.arguments import READ_ONLY, CollectionName, describe, tool_errors
from ragwright.mcp_server.results import UNTRUSTED_NOTICE, UntrustedText, untrusted
from ragwright.models.graph_records import EntityInfo, EntityLink, GraphStats
from ragwright.permissions import EVERYONE, Caller

MAX_NAME_CHARS = 500
MAX_SITES = 200


class GraphStatsResult(BaseModel):
    version: str
    chunks: int
    chunks_extracted: int
    extracted_by: dict[str, int]
    entities: int
    edges: int
    mentions: int
    relations: int
    synonym_links: int
    merges: int


class LinkView(BaseModel):
    key: UntrustedText
    name: UntrustedText
    weight: float = Field(description="Edge weight (capped), synonym score, or 1.0 (merge).")


class AliasView(BaseModel):
    text: UntrustedText
    mentions: int


class SiteView(BaseModel):
    chunk_id: str
    document_id: str
    source: UntrustedText
    chunk_index: int
    char_start: int = Field(description="Offset of the mention in its document's text.")
    char_end: int
    text: UntrustedText
    extractor: str


class EntityResult(BaseModel):
    notice: str = UNTRUSTED_NOTICE
    key: UntrustedText
    name: UntrustedText
    label: str
    mentions: int
    aliases: list[AliasView]
    synonyms: list[LinkView]
    merged: list[LinkView]
    neighbours: list[LinkView]
    sites: list[SiteView]


def register_graph_tools(
    server: MCPServer, index: Callable[[str | None], Index], caller: Caller = EVERYONE
) -> None:
    """Add the graph tools to ``server``; ``index(collection)`` is the collection to use.
    A restricted ``caller`` is refused them (the graph is built from every document)."""

    @server.tool(annotations=READ_ONLY, description="Counts of the entity graph.")
    def graph_stats(collection: CollectionName = None) -> GraphStatsResult:
        with tool_errors():
            stats = index(collection).graph.stats(caller=caller)
        return _stats(stats)

    @server.tool(
        annotations=READ_ONLY,
        description=describe(
            "One entity of the graph: aliases, synonyms, neighbours with edge weights, and "
            "the chunks that mention it with exact character spans."
        ),
    )
    def graph_entity(
        name: Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)],
        max_sites: Annotated[int, Field(ge=0, le=MAX_SITES, strict=True)] = 20,
        collection: CollectionName = None,
    ) -> EntityResult:
        with tool_errors():
            info = index(collection).graph.entity(name, max_sites=max_sites, caller=caller)
        if info is None:
            raise ToolError(f"no entity {name!r} in the graph")
        return _entity(info)


def _stats(stats: GraphStats) -> GraphStatsResult:
    return GraphStatsResult(
        version=stats.version,
        chunks=stats.chunks_total,
        chunks_extracted=stats.chunks_extracted,
        extracted_by=dict(stats.extracted),
        entities=stats.entities,
        edges=stats.edges,
        mentions=stats.mentions,
        relations=stats.relations,
        synonym_links=stats.synonym_links,
        merges=stats.merges,
    )


def _links(links: tuple[EntityLink, ...]) -> list[LinkView]:
    return [LinkView(key=untrusted(x.key), name=untrusted(x.name), weight=x.weight) for x in links]


def _entity(info: EntityInfo) -> EntityResult:
    return EntityResult(
        key=untrusted(info.key),
        name=untrusted(info.name),
        label=info.label,
        mentions=info.mentions,
        aliases=[AliasView(text=untrusted(t), mentions=n) for t, n in info.aliases],
        synonyms=_links(info.synonyms),
        merged=_links(info.merged),
        neighbours=_links(info.neighbours),
        sites=[
            SiteView(
                chunk_id=s.chunk_id,
                document_id=s.document_id,
                source=untrusted(s.source),
                chunk_index=s.chunk_index,
                char_start=s.document_start,
                char_end=s.document_end,
                text=untrusted(s.text),
                extractor=s.extractor,
            )
            for s in info.sites
        ],
    )
