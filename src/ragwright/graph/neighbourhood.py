"""An entity's neighbourhood, as the web page draws it, and entity look-up by name.

The neighbourhood is the entity (with the chunks that mention it, from `GraphReader`), its
heaviest neighbours, and every edge of the snapshot among those nodes, so a drawing shows how
the neighbours relate to each other too, not only a star. Look-up matches a text against
entity keys (the normalized names), most mentioned first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragwright.graph.keys import entity_key
from ragwright.models.graph import GraphSnapshot
from ragwright.models.graph_records import EntityInfo

#: Most neighbours one drawing shows (a dense hub would be unreadable beyond this).
MAX_NEIGHBOURS = 50


@dataclass(frozen=True, slots=True)
class EntityNode:
    key: str
    name: str
    mentions: int


@dataclass(frozen=True, slots=True)
class GraphEdge:
    source: str
    target: str
    weight: float


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    entity: EntityInfo
    #: The entity first, then its neighbours, heaviest edge first.
    nodes: tuple[EntityNode, ...]
    #: Edges among the nodes (each pair once), heaviest first.
    edges: tuple[GraphEdge, ...]


def _mention_counts(snapshot: GraphSnapshot) -> np.ndarray:
    counts = np.zeros(snapshot.entity_count, dtype=np.float64)
    np.add.at(counts, snapshot.mention_entity, snapshot.mention_count)
    return counts


def neighbourhood(
    snapshot: GraphSnapshot,
    info: EntityInfo,
    limit: int,
) -> Neighbourhood:
    """``info``'s entity and its ``limit`` heaviest neighbours, with the edges among them."""
    keys = [info.key, *(link.key for link in info.neighbours[:limit])]
    position = {key: index for index, key in enumerate(snapshot.entity_keys)}
    present = [key for key in keys if key in position]
    counts = _mention_counts(snapshot)
    nodes = tuple(
        EntityNode(key, snapshot.entity_names[position[key]], round(counts[position[key]]))
        for key in present
    )
    wanted = np.asarray([position[key] for key in present], dtype=np.int64)
    inside = np.isin(snapshot.edge_source, wanted) & np.isin(snapshot.edge_target, wanted)
    edges = sorted(
        (
            GraphEdge(snapshot.entity_keys[a], snapshot.entity_keys[b], round(float(w), 6))
            for a, b, w in zip(
                snapshot.edge_source[inside].tolist(),
                snapshot.edge_target[inside].tolist(),
                snapshot.edge_weight[inside].tolist(),
                strict=True,
            )
        ),
        key=lambda edge: (-edge.weight, edge.source, edge.target),
    )
    return Neighbourhood(info, nodes, tuple(edges))


def find_entities(snapshot: GraphSnapshot, text: str, limit: int) -> list[EntityNode]:
    """Entities whose key contains ``text``'s key, an exact match first, then by mentions."""
    wanted = entity_key(text)
    if not wanted:
        return []
    counts = _mention_counts(snapshot)
    found = [index for index, key in enumerate(snapshot.entity_keys) if wanted in key]
    found.sort(
        key=lambda i: (snapshot.entity_keys[i] != wanted, -counts[i], snapshot.entity_keys[i])
    )
    return [
        EntityNode(snapshot.entity_keys[i], snapshot.entity_names[i], round(counts[i]))
        for i in found[:limit]
    ]
