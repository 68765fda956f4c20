"""``ragwright serve``: the HTTP API and web page over one index (needs ``ragwright[server]``).

    from ragwright.server import create_app, ServerSettings
    app = create_app(Index(".ragwright"), ServerSettings(), mounts={"/mcp": mcp_app})

Importing this package imports FastAPI; ``import ragwright`` never does.
"""

from __future__ import annotations

from ragwright.server.app import create_app
from ragwright.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
