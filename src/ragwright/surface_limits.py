"""The bounds the network surfaces (HTTP API, MCP tools) put on a request, in one place so
that ``POST /v1/search`` and the MCP ``search`` tool (and ``POST /v1/ask`` and the ``ask``
tool) accept exactly the same requests."""

#: Characters in a query, question, filter expression or source id.
MAX_QUERY_CHARS = 4096
#: Hits one search may return.
MAX_TOP_K = 100
#: Chunks one answer may draw on. The map-reduce and refine engines make one LLM call per
#: chunk, so this bounds what one request from a network client can spend.
MAX_ASK_TOP_K = 20
