"""The MCP server over a federation (``ragwright mcp`` with a ``[federation]`` table): the read
tools of one index, across every member, each result naming the member index that holds it.

``search`` and ``ask`` fuse the members' rankings by rank; ``get_chunk`` and ``get_document``
take the ``index`` a hit or citation names; ``list_indexes`` names the members. A partial
search says which members were left out in ``warnings`` (an answer, in its own).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field
from starlette.applications import Starlette

from ragwright import __version__
from ragwright.federation import Federation
from ragwright.mcp_server import reads
from ragwright.mcp_server.arguments import (
    DOCUMENT_WINDOW,
    MAX_LISTED_SOURCES,
    READ_ONLY,
    AskTopK,
    CharStart,
    ChunkId,
    DocumentRef,
    EngineName,
    FilterExpression,
    MaxChars,
    Query,
    SearchTopK,
    SourceIds,
    describe,
)
from ragwright.mcp_server.results import (
    UNTRUSTED_NOTICE,
    AskResult,
    ChunkResult,
    DocumentResult,
    SearchResult,
    SourcesResult,
)
from ragwright.permissions import EVERYONE, Caller
from ragwright.shapes.mode_name import HYBRID as HYBRID_MODE
from ragwright.shapes.mode_name import ModeName

MemberName = Annotated[
    str | None,
    Field(
        max_length=64,
        description="The member index holding it: the `index` of a hit or citation (default: "
        "the first member that has it); list_indexes names them.",
    ),
]


class MemberView(BaseModel):
    name: str
    location: str = Field(description="Where the index lives (a URL's password masked).")
    collection: str


class IndexesResult(BaseModel):
    indexes: list[MemberView]
    timeout: float = Field(description="Seconds each member has to answer a search.")
    strict: bool = Field(description="True: a failed or late member fails the search.")


def build_federation_server(
    federation: Federation, *, name: str = "ragwright", caller: Caller = EVERYONE
) -> MCPServer:
    """An MCP server over ``federation``; the caller closes it. Every tool reads as
    ``caller``, whom each member applies in its own store."""
    server = MCPServer(
        name,
        version=__version__,
        instructions="Search and cite several ragwright knowledge bases as one; every result "
        "names the index it came from. " + UNTRUSTED_NOTICE,
        log_level="WARNING",
    )

    @server.tool(
        annotations=READ_ONLY,
        description=describe("Search every index of the federation; hits fused by rank."),
    )
    def search(
        query: Query,
        top_k: SearchTopK = 10,
        mode: Annotated[
            ModeName,
            Field(description="Each index searches in this mode, in its own space."),
        ] = HYBRID_MODE,
        filter: FilterExpression = None,
        sources: SourceIds = None,
    ) -> SearchResult:
        return reads.search(federation, query, mode, top_k, (filter, sources), caller)

    @server.tool(
        annotations=READ_ONLY,
        description=describe(
            "Answer a question from every index of the federation, with [n] citations that "
            "point at exact character spans of the sources (each naming its index)."
        ),
    )
    def ask(
        question: Query,
        top_k: AskTopK = 5,
        filter: FilterExpression = None,
        sources: SourceIds = None,
        engine: EngineName = None,
    ) -> AskResult:
        return reads.ask(
            federation, question, (filter, sources), engine=engine, top_k=top_k, caller=caller
        )

    @server.tool(annotations=READ_ONLY, description=describe("One chunk by its id."))
    def get_chunk(
        chunk_id: ChunkId,
        index: MemberName = None,
    ) -> ChunkResult:
        return reads.chunk(federation, chunk_id, index, caller)

    @server.tool(annotations=READ_ONLY, description=describe(DOCUMENT_WINDOW))
    def get_document(
        document: DocumentRef,
        char_start: CharStart = 0,
        max_chars: MaxChars = 20_000,
        index: MemberName = None,
    ) -> DocumentResult:
        return reads.document(federation, document, char_start, max_chars, index, caller)

    @server.tool(annotations=READ_ONLY, description="List every index's documents by source.")
    def list_sources(
        filter: FilterExpression = None,
        offset: Annotated[int, Field(ge=0, strict=True)] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_LISTED_SOURCES, strict=True)] = 100,
    ) -> SourcesResult:
        return reads.sources(federation, filter, offset, limit, caller)

    @server.tool(annotations=READ_ONLY, description="List the indexes of the federation.")
    def list_indexes() -> IndexesResult:
        settings = federation.settings
        return IndexesResult(
            indexes=[
                MemberView(name=m.name, location=m.shown, collection=m.collection)
                for m in settings.members
            ],
            timeout=settings.timeout,
            strict=settings.strict,
        )

    return server


def federation_http_app(
    federation: Federation, *, path: str = "/", host: str = "127.0.0.1"
) -> Starlette:
    """`build_federation_server` as a streamable-HTTP ASGI app to mount (see
    `ragwright.mcp_server.streamable_http_app`, whose lifespan note applies)."""
    return build_federation_server(federation).streamable_http_app(
        streamable_http_path=path, host=host
    )
