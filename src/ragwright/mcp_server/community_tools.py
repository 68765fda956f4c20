"""The communities' MCP tools (read-only): ``graph_communities`` lists a level's communities
with their report titles and the build's stats; ``graph_community`` gives one community's
report with its points cited to exact spans in their documents. Members and report text are
copied from documents, so they come wrapped as untrusted document text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from ragwright.index import Index
from ragwright.mcp_server.arguments import READ_ONLY, CollectionName, describe, tool_errors
from ragwright.mcp_server.results import UNTRUSTED_NOTICE, UntrustedText, untrusted
from ragwright.models import Citation
from ragwright.models.communities import LevelStats, StoredCommunity, StoredReport
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.permitted import refuse_restricted

MAX_ID = 2**31 - 1


class LevelView(BaseModel):
    level: int
    communities: int
    entities: int
    largest_share: float
    singleton_share: float
    modularity: float
    disconnected: int


class CommunityView(BaseModel):
    id: int
    level: int
    parent: int | None
    size: int
    dirty: bool = Field(description="A member's facts changed since the build.")
    title: UntrustedText | None = Field(description="The report's title; none before one.")
    members: list[UntrustedText]


class CommunitiesResult(BaseModel):
    notice: str = UNTRUSTED_NOTICE
    levels: list[LevelView]
    communities: list[CommunityView]


class CitationView(BaseModel):
    number: int
    source: UntrustedText
    document_id: str
    chunk_id: str
    char_start: int = Field(description="Offset of the cited span in its document's text.")
    char_end: int
    quote: UntrustedText


class CommunityResult(BaseModel):
    notice: str = UNTRUSTED_NOTICE
    community: CommunityView
    terms: list[UntrustedText]
    citations: list[CitationView]


def register_community_tools(
    server: MCPServer, index: Callable[[str | None], Index], caller: Caller = EVERYONE
) -> None:
    """Add the community tools to ``server``; ``index(collection)`` is the collection. A
    restricted ``caller`` is refused them (communities are built from every document)."""

    @server.tool(
        annotations=READ_ONLY,
        description=describe(
            "The entity graph's communities (of one level, 0 the coarsest; all levels when "
            "none is given) with their report titles, and each level's stats."
        ),
    )
    def graph_communities(
        level: Annotated[int | None, Field(ge=0, le=1000, strict=True)] = None,
        collection: CollectionName = None,
    ) -> CommunitiesResult:
        with tool_errors():
            refuse_restricted(caller, "the community reports")
            workflow = index(collection).communities.workflow()
            build = workflow.checked_build()
            reports = {r.report.community: r for r in workflow.extractive_reports()}
            listed = workflow.communities(level)
        return CommunitiesResult(
            levels=[_level(stats) for stats in build.levels],
            communities=[_community(c, reports.get(c.community.id)) for c in listed],
        )

    @server.tool(
        annotations=READ_ONLY,
        description=describe(
            "One community of the entity graph: its members and its report, each point cited "
            "to its exact character span in its document (read it with get_document)."
        ),
    )
    def graph_community(
        community_id: Annotated[int, Field(ge=0, le=MAX_ID, strict=True)],
        collection: CollectionName = None,
    ) -> CommunityResult:
        with tool_errors():
            refuse_restricted(caller, "the community reports")
            view = index(collection).communities.get(community_id)
        if view is None:
            raise ToolError(f"no community {community_id} in the index")
        terms = list(view.report.report.terms) if view.report is not None else []
        return CommunityResult(
            community=_community(view.community, view.report),
            terms=[untrusted(term) for term in terms],
            citations=[_citation(c) for c in view.citations],
        )


def _level(stats: LevelStats) -> LevelView:
    return LevelView(
        level=stats.level,
        communities=stats.communities,
        entities=stats.entities,
        largest_share=round(stats.largest_share, 4),
        singleton_share=round(stats.singleton_share, 4),
        modularity=round(stats.modularity, 4),
        disconnected=stats.disconnected,
    )


def _community(stored: StoredCommunity, report: StoredReport | None) -> CommunityView:
    community = stored.community
    return CommunityView(
        id=community.id,
        level=community.level,
        parent=community.parent,
        size=community.size,
        dirty=stored.dirty,
        title=untrusted(report.report.title) if report is not None else None,
        members=[untrusted(key) for key in community.members],
    )


def _citation(citation: Citation) -> CitationView:
    return CitationView(
        number=citation.number,
        source=untrusted(citation.source),
        document_id=citation.document_id,
        chunk_id=citation.chunk_id,
        char_start=citation.char_start,
        char_end=citation.char_end,
        quote=untrusted(citation.quote),
    )
