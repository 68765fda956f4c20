"""`CollectionPool`: the collections of one index, each opened on first use and kept open.

What a long-running surface (the HTTP server, the MCP server) serves: requests name a
collection, or none for the one the server was started on.
"""

from __future__ import annotations

import threading

from ragwright.index import Index
from ragwright.models import check_collection_name


class CollectionPool:
    """Opens the other collections of ``default``'s index as they are asked for, with its
    embedder choice and LLM settings. Closes what it opened; ``default`` stays its caller's."""

    def __init__(self, default: Index) -> None:
        self.default = default
        self._opened: dict[str, Index] = {}
        self._lock = threading.Lock()

    def get(self, name: str | None = None) -> Index:
        """The collection ``name`` (the default one for None); `UnknownCollection` if the
        index has none of that name."""
        if name is None or name == self.default.collection:
            return self.default
        check_collection_name(name)
        with self._lock:
            if name not in self._opened:
                self._opened[name] = self.default.open_collection(name)
            return self._opened[name]

    def close(self) -> None:
        with self._lock:
            for index in self._opened.values():
                index.close()
            self._opened.clear()
