"""``ragwright serve``: the HTTP API and web page over one index (needs ``ragwright[server]``).

    from ragwright.server import create_app, mcp_mount, ServerSettings
    index = Index(".ragwright")
    app = create_app(index, ServerSettings(), mounts=mcp_mount(index, "127.0.0.1"))

Importing this package imports FastAPI; ``import ragwright`` never does.
"""

from __future__ import annotations

from ragwright.server.app import create_app, create_federation_app
from ragwright.server.mounts import MCP_PATH, mcp_mount
from ragwright.server.settings import ServerSettings

__all__ = ["MCP_PATH", "ServerSettings", "create_app", "create_federation_app", "mcp_mount"]
