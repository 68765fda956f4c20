"""The bounds every surface (CLI, HTTP API, MCP tools) puts on a request, in one place so that
``ragwright search``, ``POST /v1/search`` and the MCP ``search`` tool (and ``ask``, ``POST
/v1/ask`` and the ``ask`` tool) accept exactly the same requests."""

from __future__ import annotations

from ragwright.errors import ConfigError

#: Characters in a query, question, filter expression or source id.
MAX_QUERY_CHARS = 4096
#: Hits one search may return.
MAX_TOP_K = 100
#: Chunks one answer may draw on. The map-reduce and refine engines make one LLM call per
#: chunk, so this bounds what one request can spend.
MAX_ASK_TOP_K = 20


def checked_text(text: str, what: str = "query") -> str:
    """``text`` when it is not blank and within `MAX_QUERY_CHARS`, else a `ConfigError`."""
    if not text.strip():
        raise ConfigError(f"the {what} is empty; say what to look for")
    if len(text) > MAX_QUERY_CHARS:
        raise ConfigError(
            f"the {what} has {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}"
        )
    return text
