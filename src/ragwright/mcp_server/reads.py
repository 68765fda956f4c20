"""The read tools' work, written once over `ragwright.reading.Reader`: one index's server and a
federation's declare their own tools (their arguments differ: a collection, or a member index)
and hand the call to these. Each result names the member holding it (None for one index)."""

from __future__ import annotations

from typing import Unpack

from mcp.server.mcpserver.exceptions import ToolError

from ragwright.index import AskOptions
from ragwright.mcp_server.arguments import refuse_unknown_engine, tool_errors, where_of
from ragwright.mcp_server.results import (
    AskResult,
    ChunkResult,
    DocumentResult,
    SearchResult,
    SourcesResult,
    ask_result,
    chunk_view,
    document_result,
    hit_view,
    route_view,
    source_view,
)
from ragwright.permissions import Caller
from ragwright.pipeline.search.request import SearchRequest
from ragwright.planner import requested
from ragwright.reading import Reader


def search(
    reader: Reader,
    query: str,
    mode: str,
    top_k: int,
    where: tuple[str | None, list[str] | None],
    caller: Caller,
) -> SearchResult:
    """The hits, with the route that ran (a federation's: the mode asked for, since each
    member plans its own) and the members left out. ``where``: the filter expression and
    the sources (see `where_of`)."""
    with tool_errors():
        request = SearchRequest().but(mode=mode, top_k=top_k, where=where_of(*where), caller=caller)
        found = reader.find(query, request)
    return SearchResult(
        query=query,
        mode=mode,
        route=route_view(found.route or requested(mode)),
        hits=[hit_view(rank, hit) for rank, hit in enumerate(found.hits, start=1)],
        warnings=list(found.warnings or ()),
    )


def ask(
    reader: Reader,
    question: str,
    selected: tuple[str | None, list[str] | None],
    **options: Unpack[AskOptions],
) -> AskResult:
    """The answer, its citations naming their members. ``selected``: the filter expression
    and the sources, as for `search`."""
    refuse_unknown_engine(options.get("engine"))
    with tool_errors():
        options["where"] = where_of(*selected)
        answer = reader.ask(question, **options)
    return ask_result(question, answer)


def chunk(reader: Reader, chunk_id: str, member: str | None, caller: Caller) -> ChunkResult:
    with tool_errors():
        found = reader.chunk(chunk_id, member, caller=caller)
        document = reader.document(found[1].document_id, found[0], caller=caller) if found else None
    if found is None or document is None:
        raise ToolError(f"no chunk with id {chunk_id!r}")
    return ChunkResult(chunk=chunk_view(found[1], document[1].source), index=found[0])


def document(
    reader: Reader,
    id_or_source: str,
    char_start: int,
    max_chars: int,
    member: str | None,
    caller: Caller,
) -> DocumentResult:
    with tool_errors():
        found = reader.document(id_or_source, member, caller=caller)
    if found is None:
        raise ToolError(f"no document with id or source {id_or_source!r}")
    result = document_result(found[1], char_start, max_chars)
    return result.model_copy(update={"index": found[0]})


def sources(
    reader: Reader, where: str | None, offset: int, limit: int, caller: Caller
) -> SourcesResult:
    with tool_errors():
        documents = reader.documents(where, caller=caller)
    page = documents[offset : offset + limit]
    return SourcesResult(
        total=len(documents),
        offset=offset,
        sources=[source_view(info).model_copy(update={"index": name}) for name, info in page],
    )
