"""A `GraphSource` fake for tests: one snapshot, built by hand from entity names and the ids
of the chunks mentioning them (until a store keeps a graph, this is how answers get one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragwright.graph.keys import entity_key
from ragwright.models.graph import GraphSnapshot


class FixedGraph:
    """A `GraphSource` holding one snapshot."""

    def __init__(self, snapshot: GraphSnapshot) -> None:
        self.snapshot = snapshot

    def graph_version(self) -> str:
        return self.snapshot.version

    def graph_snapshot(self) -> GraphSnapshot:
        return self.snapshot


def snapshot(
    mentions: dict[str, Sequence[str]], edges: Sequence[tuple[str, str, float]] = ()
) -> GraphSnapshot:
    """A snapshot from entity name -> ids of the chunks mentioning it, and weighted edges."""
    names = list(mentions)
    chunk_ids = sorted({c for chunks in mentions.values() for c in chunks})
    rows = [(names.index(n), chunk_ids.index(c)) for n, cs in mentions.items() for c in cs]
    pairs = [tuple(sorted((names.index(a), names.index(b)))) for a, b, _ in edges]

    def ints(values: Sequence[int]) -> Any:
        return np.asarray(values, dtype=np.int32)

    def floats(values: Sequence[float]) -> Any:
        return np.asarray(values, dtype=np.float32)

    return GraphSnapshot(
        version="v1",
        entity_keys=tuple(entity_key(n) for n in names),
        entity_names=tuple(names),
        chunk_ids=tuple(chunk_ids),
        mention_entity=ints([e for e, _ in rows]),
        mention_chunk=ints([c for _, c in rows]),
        mention_count=floats([1.0] * len(rows)),
        edge_source=ints([a for a, _ in pairs]),
        edge_target=ints([b for _, b in pairs]),
        edge_weight=floats([w for *_, w in edges]),
        synonym_source=ints([]),
        synonym_target=ints([]),
        synonym_weight=floats([]),
    )
