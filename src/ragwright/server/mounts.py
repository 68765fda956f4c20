"""Apps `ragwright serve` mounts beside the API: the MCP server, when its extra is installed."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp

from ragwright.federation import Federation
from ragwright.index import Index
from ragwright.server.access_log import LOGGER

#: Where the MCP server's streamable-HTTP endpoint lives (the endpoint is ``/mcp/``).
MCP_PATH = "/mcp"


def mcp_mount(index: Index | Federation, host: str) -> dict[str, ASGIApp]:
    """``{"/mcp": app}`` serving the MCP tools (of one index, or of a federation) over
    streamable HTTP behind the API's keys and limits, or nothing (with a log line) when
    ``ragwright[mcp]`` is not installed. ``host`` is the serving interface: on loopback the
    SDK refuses foreign Host headers (DNS rebinding)."""
    try:
        from ragwright.mcp_server import federation_http_app, streamable_http_app
    except ImportError:
        logging.getLogger(LOGGER).info(
            "MCP over HTTP is off: pip install 'ragwright[mcp]' to serve it at /mcp/"
        )
        return {}
    if isinstance(index, Federation):
        return {MCP_PATH: federation_http_app(index, host=host)}
    return {MCP_PATH: streamable_http_app(index, host=host)}
