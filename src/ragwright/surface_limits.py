"""The bounds the network surfaces (HTTP API, MCP tools) put on a request, in one place so
that ``POST /v1/search`` and the MCP ``search`` tool accept exactly the same queries."""

#: Characters in a query, question, filter expression or source id.
MAX_QUERY_CHARS = 4096
#: Hits one search may return.
MAX_TOP_K = 100
