"""The MCP tools' arguments and their checks, shared by every tool module: bounded argument
types, the read-only annotation, a document's window, and the errors a tool reports."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from ragwright.errors import RagwrightError
from ragwright.filters import Filter, In, all_of, any_of, parse_filter
from ragwright.llms.settings import ENGINES, unknown_engine
from ragwright.mcp_server.results import (
    UNTRUSTED_NOTICE,
)
from ragwright.surface_limits import MAX_ASK_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K

MAX_SOURCES = 100
MAX_DOCUMENT_CHARS = 100_000
MAX_LISTED_SOURCES = 1000

Query = Annotated[
    str,
    Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for."),
]
FilterExpression = Annotated[
    str | None,
    Field(
        max_length=MAX_QUERY_CHARS,
        description="Metadata filter, e.g. 'year >= 2020 and lang = \"en\"' (docs/filters.md).",
    ),
]
SourceIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]] | None,
    Field(
        max_length=MAX_SOURCES,
        description=f"Restrict to these documents (source paths or document ids, at most "
        f"{MAX_SOURCES}).",
    ),
]
SearchTopK = Annotated[int, Field(ge=1, le=MAX_TOP_K, strict=True, description="Number of hits.")]
AskTopK = Annotated[
    int, Field(ge=1, le=MAX_ASK_TOP_K, strict=True, description="Passages to answer from.")
]
EngineName = Annotated[
    str | None,
    Field(
        description="Answer engine: " + ", ".join(ENGINES) + ". Default: the server's "
        "configured one (extractive, offline, unless [llm] says otherwise).",
        json_schema_extra={"enum": [*ENGINES, None]},
    ),
]
CollectionName = Annotated[
    str | None,
    Field(
        pattern=r"^[a-z][a-z0-9_]{0,39}$",
        description="Collection of the index to use (default: the one the server was started "
        "on); list_collections names them.",
    ),
]
ChunkId = Annotated[str, Field(min_length=1, max_length=256)]
DocumentRef = Annotated[
    str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Id or source.")
]
CharStart = Annotated[int, Field(ge=0, strict=True, description="Where the window starts.")]
MaxChars = Annotated[int, Field(ge=1, le=MAX_DOCUMENT_CHARS, strict=True)]
#: get_document's description, the same for one index and a federation.
DOCUMENT_WINDOW = (
    "A document's text by document id or source path, a window of "
    f"at most {MAX_DOCUMENT_CHARS:,} characters at a time."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


@contextmanager
def tool_errors() -> Iterator[None]:
    """ragwright's own errors become tool errors with their message (bad filters, a missing
    index, an embedding-space mismatch); anything else stays an unexpected failure."""
    try:
        yield
    except RagwrightError as error:
        raise ToolError(str(error)) from error


def where_of(expression: str | None, sources: list[str] | None) -> Filter | None:
    parts: list[Filter] = []
    if expression and expression.strip():
        parts.append(parse_filter(expression))
    if sources:
        ids = tuple(dict.fromkeys(sources))
        parts.append(any_of(In("source", ids), In("document_id", ids)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else all_of(*parts)


def refuse_unknown_engine(engine: str | None) -> None:
    """A tool error for an engine no answer engine is named (the schema lists them, but a
    client may not check)."""
    if engine is not None and engine not in ENGINES:
        raise ToolError(unknown_engine(engine))


def describe(what: str) -> str:
    return f"{what} {UNTRUSTED_NOTICE}"
