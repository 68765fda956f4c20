"""The MCP server: ragwright's search, answers, documents and entity graph as read-only tools.

Built on the SDK's high-level `MCPServer` rather than the low-level `Server`: each tool is a
typed function whose annotations become its input schema (bounds included) and whose return
type becomes its output schema, so the SDK validates every call against the published bounds
before any work is done (a violation comes back as a tool error naming the field) and sends
structured content. The low-level server would have us hand-write and hand-check both schemas.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field
from starlette.applications import Starlette

from ragwright import __version__
from ragwright.collection_pool import CollectionPool
from ragwright.index import Index
from ragwright.mcp_server import reads
from ragwright.mcp_server.arguments import (
    DOCUMENT_WINDOW,
    MAX_LISTED_SOURCES,
    READ_ONLY,
    AskTopK,
    CharStart,
    ChunkId,
    CollectionName,
    DocumentRef,
    EngineName,
    FilterExpression,
    MaxChars,
    Query,
    SearchTopK,
    SourceIds,
    describe,
    tool_errors,
)
from ragwright.mcp_server.results import (
    UNTRUSTED_NOTICE,
    AskResult,
    ChunkResult,
    CollectionsResult,
    DocumentResult,
    SearchResult,
    SourcesResult,
)
from ragwright.permissions import EVERYONE, Caller
from ragwright.reading import IndexReader, Reader
from ragwright.shapes.mode_name import HYBRID as HYBRID_MODE
from ragwright.shapes.mode_name import ModeName

IndexSource = Index | Callable[[], Index]


def build_server(
    index: IndexSource, *, name: str = "ragwright", caller: Caller = EVERYONE
) -> MCPServer:
    """An MCP server over ``index`` (an `Index`, or a function that opens one on first use).
    Every tool reads as ``caller`` (``ragwright mcp --principal``): only what it may read."""
    kb = _IndexHandle(index)
    server = MCPServer(
        name,
        version=__version__,
        instructions="Search and cite a ragwright knowledge base. " + UNTRUSTED_NOTICE,
        log_level="WARNING",
    )

    def reader(collection: str | None) -> Reader:
        with tool_errors():  # an unknown collection is the caller's error
            return IndexReader(kb.get(collection))

    @server.tool(annotations=READ_ONLY, description=describe("Search the knowledge base."))
    def search(
        query: Query,
        top_k: SearchTopK = 10,
        mode: Annotated[
            ModeName,
            Field(
                description="graph: hybrid fused with entity-graph search (needs a graph); "
                "global: the chunks the community reports chosen for the query cite (needs "
                "communities); auto: the planner chooses from the query (route says which and why)."
            ),
        ] = HYBRID_MODE,
        filter: FilterExpression = None,
        sources: SourceIds = None,
        collection: CollectionName = None,
    ) -> SearchResult:
        return reads.search(reader(collection), query, mode, top_k, (filter, sources), caller)

    @server.tool(
        annotations=READ_ONLY,
        description=describe(
            "Answer a question from the knowledge base, with [n] citations "
            "that point at exact character spans of the sources."
        ),
    )
    def ask(
        question: Query,
        top_k: AskTopK = 5,
        filter: FilterExpression = None,
        sources: SourceIds = None,
        engine: EngineName = None,
        graph_context: Annotated[
            bool | None,
            Field(
                description="Give an LLM engine the entities and relations of the passages, "
                "from the index's entity graph. Default: the server's [answer] graph_context."
            ),
        ] = None,
        mode: Annotated[
            ModeName,
            Field(
                description="The search mode (default hybrid, as for search); auto: the "
                "planner chooses; global "
                "answers from the community reports, about the whole corpus."
            ),
        ] = HYBRID_MODE,
        collection: CollectionName = None,
    ) -> AskResult:
        return reads.ask(
            reader(collection),
            question,
            (filter, sources),
            engine=engine,
            top_k=top_k,
            graph_context=graph_context,
            mode=mode,
            caller=caller,
        )

    @server.tool(annotations=READ_ONLY, description=describe("One chunk by its id."))
    def get_chunk(
        chunk_id: ChunkId,
        collection: CollectionName = None,
    ) -> ChunkResult:
        return reads.chunk(reader(collection), chunk_id, None, caller)

    @server.tool(annotations=READ_ONLY, description=describe(DOCUMENT_WINDOW))
    def get_document(
        document: DocumentRef,
        char_start: CharStart = 0,
        max_chars: MaxChars = 20_000,
        collection: CollectionName = None,
    ) -> DocumentResult:
        return reads.document(reader(collection), document, char_start, max_chars, None, caller)

    @server.tool(annotations=READ_ONLY, description="List the indexed documents by source.")
    def list_sources(
        filter: FilterExpression = None,
        offset: Annotated[int, Field(ge=0, strict=True)] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_LISTED_SOURCES, strict=True)] = 100,
        collection: CollectionName = None,
    ) -> SourcesResult:
        return reads.sources(reader(collection), filter, offset, limit, caller)

    @server.tool(annotations=READ_ONLY, description="List the collections of the index.")
    def list_collections() -> CollectionsResult:
        with tool_errors():
            names = kb.get().collections()
        return CollectionsResult(collections=names, default=kb.get().collection)

    # Imported here: the graph tools use this module's shared field types and helpers.
    from ragwright.mcp_server.community_tools import register_community_tools
    from ragwright.mcp_server.graph_tools import register_graph_tools

    register_graph_tools(server, kb.get, caller)
    register_community_tools(server, kb.get, caller)
    return server


def streamable_http_app(
    index: IndexSource, *, path: str = "/", host: str = "127.0.0.1"
) -> Starlette:
    """The server as a streamable-HTTP ASGI app, for mounting under another app, e.g.
    ``Mount("/mcp", app=streamable_http_app(index))`` (the endpoint is then ``/mcp/``).

    The app's lifespan runs the MCP session manager, and Starlette does not run a mounted
    app's lifespan: the parent must enter ``app.router.lifespan_context(app)`` in its own.
    ``host`` is the interface the parent serves on: on loopback the SDK turns on DNS-rebinding
    protection (requests must name a loopback Host and Origin)."""
    return build_server(index).streamable_http_app(streamable_http_path=path, host=host)


class _IndexHandle:
    """The index, opened on first use when given as a factory (once, under a lock), and its
    other collections, opened when a tool call names them (see `CollectionPool`)."""

    def __init__(self, source: IndexSource) -> None:
        self._source = source
        self._pool: CollectionPool | None = None
        if isinstance(source, Index):
            self._pool = CollectionPool(source)
        self._lock = threading.Lock()

    def get(self, collection: str | None = None) -> Index:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    assert callable(self._source)
                    self._pool = CollectionPool(self._source())
        return self._pool.get(collection)
