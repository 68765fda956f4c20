"""Communities of the entity graph: hierarchical Leiden (``graspologic-native``, MIT) over the
entity–entity edges of a `GraphSnapshot`, made safe against the failures seen in practice.

- **Capped weights.** Each edge weighs at most ``weight_cap`` (the store caps aggregates too):
  unbounded co-occurrence weights let one pair of entities pull everything into one cluster.
- **Minimum frequency.** Entities mentioned fewer than ``min_mentions`` times are left out;
  they are noise to a clusterer and make singletons.
- **Fixed seed**, so equal graphs give equal communities.
- **Connected.** Leiden can return a community whose members are not connected inside it;
  each such community is split into its connected components (a child of a split parent goes
  to the piece that holds it: a connected child lies inside one piece).
- **Measured.** Every build reports, per level: community count, sizes, singleton share,
  largest-community share and modularity (of the level's complete partition: an entity whose
  community was not refined at this level keeps its coarser one).

Levels: 0 is the coarsest partition of every clustered entity; level ``n + 1`` holds the
refinements of the level-``n`` communities larger than ``max_cluster_size``.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragwright.errors import MissingDependencyError
from ragwright.models.communities import (
    Community,
    CommunityBuild,
    CommunitySettings,
    LevelStats,
)
from ragwright.models.graph import GraphSnapshot

__all__ = ["detect_communities"]

log = logging.getLogger(__name__)

_INSTALL = "pip install 'ragwright[graph]'"


def detect_communities(
    snapshot: GraphSnapshot, settings: CommunitySettings | None = None
) -> CommunityBuild:
    """Hierarchical Leiden communities of ``snapshot``'s entities, connected and measured."""
    settings = settings or CommunitySettings()
    started = time.perf_counter()
    keys, edges = _edges(snapshot, settings)
    raw = _leiden(edges, settings) if edges else []
    communities = _connected(raw, _adjacency(edges))
    levels = _level_stats(communities, edges, settings, raw)
    build = CommunityBuild(
        graph_version=snapshot.version,
        settings=settings,
        communities=tuple(communities),
        levels=levels,
        clustered=len({k for c in communities if c.level == 0 for k in c.members}),
        unclustered=snapshot.entity_count - len(keys),
        seconds=time.perf_counter() - started,
    )
    for stats in build.levels:
        log.info(
            "communities level %d: %d communities, largest %.1f%%, singletons %.1f%%, "
            "modularity %.3f, %d split",
            stats.level,
            stats.communities,
            100 * stats.largest_share,
            100 * stats.singleton_share,
            stats.modularity,
            stats.split,
        )
    return build


Edge = tuple[str, str, float]


def _edges(snapshot: GraphSnapshot, settings: CommunitySettings) -> tuple[set[str], list[Edge]]:
    """The capped edges between frequent entities, and the keys they touch."""
    mentions = np.zeros(snapshot.entity_count, dtype=np.float64)
    np.add.at(mentions, snapshot.mention_entity, snapshot.mention_count)
    frequent = mentions >= settings.min_mentions
    edges: list[Edge] = []
    keys = snapshot.entity_keys
    for source, target, weight in zip(
        snapshot.edge_source.tolist(),
        snapshot.edge_target.tolist(),
        snapshot.edge_weight.tolist(),
        strict=True,
    ):
        if frequent[source] and frequent[target] and weight > 0:
            edges.append((keys[source], keys[target], min(float(weight), settings.weight_cap)))
    touched = {key for edge in edges for key in edge[:2]}
    return touched, edges


@dataclass(frozen=True, slots=True)
class _Raw:
    """One cluster as Leiden returned it."""

    level: int
    cluster: int
    parent: int | None
    members: tuple[str, ...]


def _leiden(edges: list[Edge], settings: CommunitySettings) -> list[_Raw]:
    try:
        import graspologic_native as gn
    except ImportError as error:
        raise MissingDependencyError("graph communities", _INSTALL) from error
    result = gn.hierarchical_leiden(
        edges,
        resolution=settings.resolution,
        max_cluster_size=settings.max_cluster_size,
        seed=settings.seed,
        use_modularity=True,
    )
    members: dict[tuple[int, int], list[str]] = defaultdict(list)
    parents: dict[tuple[int, int], int | None] = {}
    for item in result:
        members[(item.level, item.cluster)].append(item.node)
        parents[(item.level, item.cluster)] = item.parent_cluster
    return [
        _Raw(level, cluster, parents[(level, cluster)], tuple(sorted(nodes)))
        for (level, cluster), nodes in sorted(members.items())
    ]


def _adjacency(edges: list[Edge]) -> dict[str, set[str]]:
    neighbours: dict[str, set[str]] = defaultdict(set)
    for source, target, _ in edges:
        neighbours[source].add(target)
        neighbours[target].add(source)
    return neighbours


def _components(members: Sequence[str], neighbours: Mapping[str, set[str]]) -> list[list[str]]:
    """The connected components of the subgraph ``members`` induce (each sorted)."""
    inside = set(members)
    seen: set[str] = set()
    pieces = []
    for start in members:
        if start in seen:
            continue
        seen.add(start)
        piece, frontier = [start], [start]
        while frontier:
            node = frontier.pop()
            for other in neighbours.get(node, ()):
                if other in inside and other not in seen:
                    seen.add(other)
                    piece.append(other)
                    frontier.append(other)
        pieces.append(sorted(piece))
    return sorted(pieces, key=lambda piece: (-len(piece), piece[0]))


@dataclass(frozen=True, slots=True)
class _Piece:
    level: int
    members: tuple[str, ...]
    parent: int | None  # the parent piece's position (one level up)


def _connected(raw: list[_Raw], neighbours: Mapping[str, set[str]]) -> list[Community]:
    """Leiden's clusters split into connected pieces, numbered level by level."""
    pieces: list[_Piece] = []
    by_level: dict[int, list[_Raw]] = defaultdict(list)
    for cluster in raw:
        by_level[cluster.level].append(cluster)
    placed: dict[tuple[int, str], int] = {}  # (level, key) -> index into pieces
    for level in sorted(by_level):
        found: list[_Piece] = []
        for cluster in by_level[level]:
            parts = _components(cluster.members, neighbours)
            for part in parts:
                parent = placed.get((level - 1, part[0])) if level else None
                found.append(_Piece(level, tuple(part), parent))
        found.sort(key=lambda piece: (-len(piece.members), piece.members[0]))
        for piece in found:
            position = len(pieces)
            pieces.append(piece)
            for key in piece.members:
                placed[(level, key)] = position
    return [
        Community(
            id=position,
            level=piece.level,
            parent=piece.parent,
            members=piece.members,
        )
        for position, piece in enumerate(pieces)
    ]


def _level_stats(
    communities: list[Community],
    edges: list[Edge],
    settings: CommunitySettings,
    raw: list[_Raw],
) -> tuple[LevelStats, ...]:
    neighbours = _adjacency(edges)
    split_by_level: dict[int, int] = defaultdict(int)
    for cluster in raw:
        if len(_components(cluster.members, neighbours)) > 1:
            split_by_level[cluster.level] += 1
    levels = sorted({c.level for c in communities})
    partition: dict[str, int] = {}
    stats = []
    for level in levels:
        here = [c for c in communities if c.level == level]
        for community in here:  # refine the partition: coarser communities stay below
            for key in community.members:
                partition[key] = community.id
        sizes = [c.size for c in here]
        stats.append(
            LevelStats(
                level=level,
                communities=len(here),
                entities=sum(sizes),
                largest=max(sizes),
                singletons=sum(1 for size in sizes if size == 1),
                disconnected=sum(1 for c in here if len(_components(c.members, neighbours)) > 1),
                split=split_by_level[level],
                modularity=_modularity(edges, partition, settings),
            )
        )
    return tuple(stats)


def _modularity(edges: list[Edge], partition: dict[str, int], settings: CommunitySettings) -> float:
    import graspologic_native as gn

    return float(gn.modularity(edges, dict(partition), resolution=settings.resolution))
