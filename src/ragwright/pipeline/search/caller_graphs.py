"""The entity graph each caller's graph-mode search walks: the whole graph for the unrestricted
caller, and for a caller bound to principals the graph of the evidence in the chunks it may
read only (`ScopedGraphSource`), so links found only in documents it may not read never move
its ranking: it ranks as on an index of its documents alone.

A caller's view is built from the store's facts (a read of every fact in its chunks, and
synonym linking over its entities), then kept per graph version for the few callers a server
sees at once, each with a `GraphSearch` of its own, so their walks never evict the whole
graph's cached links (the unrestricted caller's search is the one it always was).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from ragwright.errors import AccessDenied
from ragwright.filters import Readable
from ragwright.graph.search import GraphSearch
from ragwright.models.graph import GraphSnapshot
from ragwright.permissions import Caller
from ragwright.pipeline.search.graph_retrieval import GraphRetriever
from ragwright.ports import GraphSource, ProvenanceReader, ScopedGraphSource

#: Callers' views kept at once (each a snapshot and its walk's links).
VIEWS_KEPT = 4


@dataclass(frozen=True, slots=True)
class FixedGraph:
    """A `GraphSource` over one snapshot (a caller's view, made for one version)."""

    snapshot: GraphSnapshot

    def graph_version(self) -> str:
        return self.snapshot.version

    def graph_snapshot(self) -> GraphSnapshot:
        return self.snapshot


class CallerGraphs:
    """Graph retrievers per caller over ``graph`` (None: the index has none), whose whole
    graph ``search`` walks."""

    def __init__(self, graph: GraphSource | None, search: GraphSearch) -> None:
        self.graph = graph
        self.search = search
        self._lock = threading.Lock()
        self._views: OrderedDict[tuple[str, str], tuple[FixedGraph, GraphSearch]] = OrderedDict()

    def retriever(self, caller: Caller, reader: ProvenanceReader) -> GraphRetriever:
        """The graph retriever of ``caller``'s graph-mode searches."""
        readable = caller.readable()
        if readable is None or self.graph is None:  # no graph: `check` says so to anyone
            return GraphRetriever(self.graph, reader, self.search)
        view, search = self._view(readable)
        return GraphRetriever(view, reader, search)

    def has_chunks(self, caller: Caller) -> bool:
        """Whether ``caller``'s graph has a chunk to walk to (`mode="auto"` routes to graph
        search only then)."""
        readable = caller.readable()
        if self.graph is None:
            return False
        if readable is None:
            return self.graph.graph_snapshot().chunk_count > 0
        if not isinstance(self.graph, ScopedGraphSource):
            return False  # a graph it cannot have its own view of is none of its
        return self._view(readable)[0].snapshot.chunk_count > 0

    def _view(self, readable: Readable) -> tuple[FixedGraph, GraphSearch]:
        graph = self.graph
        if graph is None or not isinstance(graph, ScopedGraphSource):
            raise AccessDenied(
                "graph search over an entity graph given to the index cannot be limited to "
                "what a caller bound to principals may read; search in another mode"
            )
        key = (graph.graph_version(), repr(readable))
        with self._lock:
            found = self._views.get(key)
            if found is not None:
                self._views.move_to_end(key)
                return found
        # Built outside the lock (a read of the store); at worst twice for one caller.
        made = (
            FixedGraph(graph.readable_graph_snapshot(readable)),
            GraphSearch(self.search.query_extractor),
        )
        with self._lock:
            self._views[key] = made
            while len(self._views) > VIEWS_KEPT:
                self._views.popitem(last=False)
        return made
