"""Whether the entity graph is there to search: its snapshot, or why not."""

from __future__ import annotations

from ragwright.errors import GraphNotBuilt
from ragwright.models.graph import GraphSnapshot
from ragwright.ports import GraphSource

BUILD_HINT = "run `ragwright graph build` first (or ingest with --graph)"


def built_snapshot(graph: GraphSource | None) -> GraphSnapshot:
    """``graph``'s snapshot; `GraphNotBuilt` when there is no graph or it is empty."""
    if graph is None:
        raise GraphNotBuilt(f"this index has no entity graph; {BUILD_HINT}")
    snapshot = graph.graph_snapshot()
    if snapshot.chunk_count == 0:
        raise GraphNotBuilt(f"the index's entity graph is empty; {BUILD_HINT}")
    return snapshot
