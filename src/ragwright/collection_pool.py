"""`CollectionPool`: the collections of one index, each opened on first use and kept open.

What a long-running surface (the HTTP server, the MCP server) serves: requests name a
collection, or none for the one the server was started on.

Another process may drop a collection (`ragwright collections drop`) and create it again while
the server runs. Each request for a named collection therefore asks the open one whether it is
still current (`Index.is_current`: a file stat on SQLite, one catalog query on PostgreSQL); a
stale one is let go, and the name opened again: `UnknownCollection` if it is gone, the new
collection if it was created again. A request already running on the stale one finishes on
it, so it is closed only some minutes later (or when the pool closes).
"""

from __future__ import annotations

import threading
import time

from ragwright.index import Index
from ragwright.models import check_collection_name

#: How long a stale collection stays open for the requests that were using it.
RETIRE_SECONDS = 300.0


class CollectionPool:
    """Opens the other collections of ``default``'s index as they are asked for, with its
    embedder choice and LLM settings. Closes what it opened; ``default`` stays its caller's
    (the default collection cannot be dropped)."""

    def __init__(self, default: Index) -> None:
        self.default = default
        self._opened: dict[str, Index] = {}
        self._retired: list[tuple[float, Index]] = []
        self._lock = threading.Lock()

    def get(self, name: str | None = None) -> Index:
        """The collection ``name`` (the default one for None); `UnknownCollection` if the
        index has none of that name (now: one dropped since it was opened included)."""
        if name is None or name == self.default.collection:
            return self.default
        check_collection_name(name)
        with self._lock:
            self._close_retired(time.monotonic() - RETIRE_SECONDS)
            index = self._opened.get(name)
            if index is not None and not index.is_current():
                self._retired.append((time.monotonic(), self._opened.pop(name)))
                index = None
            if index is None:
                index = self._opened[name] = self.default.open_collection(name)
            return index

    def close(self) -> None:
        with self._lock:
            self._close_retired(float("inf"))
            for index in self._opened.values():
                index.close()
            self._opened.clear()

    def _close_retired(self, before: float) -> None:
        keep = []
        for retired_at, index in self._retired:
            if retired_at <= before:
                index.close()
            else:
                keep.append((retired_at, index))
        self._retired = keep
