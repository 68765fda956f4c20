"""What an index can run for ``mode="auto"``, cached by the graph and community versions.

Every auto search asks; the answer changes only when the graph or the communities do. So the
version tokens are read (one small meta read each) and the graph snapshot and the community
build record are looked at again only when a token moved, from this process or another.
"""

from __future__ import annotations

import threading

from ragwright.planner.dispatch import Capabilities
from ragwright.ports import CommunityStore, GraphSource


class CapabilityCache:
    """`Capabilities` of one index, from its graph (if any) and its store's communities."""

    def __init__(self, graph: GraphSource | None, store: object) -> None:
        self._graph = graph
        self._communities = store if isinstance(store, CommunityStore) else None
        self._lock = threading.Lock()
        self._cached: tuple[tuple[str, str], Capabilities] | None = None

    def current(self) -> Capabilities:
        key = (
            self._graph.graph_version() if self._graph is not None else "",
            self._communities.community_version() if self._communities is not None else "",
        )
        with self._lock:
            cached = self._cached
        if cached is not None and cached[0] == key:
            return cached[1]
        able = Capabilities(
            graph=self._graph is not None and self._graph.graph_snapshot().chunk_count > 0,
            global_search=self._communities is not None
            and self._communities.community_build() is not None,
        )
        with self._lock:
            self._cached = (key, able)
        return able
