"""ragwright as an MCP server (official `mcp` SDK): stdio for assistants, streamable HTTP for
mounting under a web app. Named ``mcp_server`` so it is never confused with the SDK's ``mcp``.
"""

from __future__ import annotations

from ragwright.mcp_server.federation import build_federation_server, federation_http_app
from ragwright.mcp_server.results import UNTRUSTED_NOTICE, UntrustedData, UntrustedText
from ragwright.mcp_server.server import IndexSource, build_server, streamable_http_app

__all__ = [
    "UNTRUSTED_NOTICE",
    "IndexSource",
    "UntrustedData",
    "UntrustedText",
    "build_federation_server",
    "build_server",
    "federation_http_app",
    "streamable_http_app",
]
