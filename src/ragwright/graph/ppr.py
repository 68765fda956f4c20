"""Personalized PageRank over the entity–chunk graph of a `GraphSnapshot`, computed locally.

One node per entity and per chunk (entities first). Links, symmetric:

- entity–chunk, weighted by how often the chunk mentions the entity (``log1p``: a chunk that
  names its subject ten times is about it, not ten times as much about it);
- entity–entity, the relation edges' aggregate weight times ``relation_weight``;
- entity–entity synonym links times ``synonym_weight``.

The walk follows a link (chosen by weight) with probability ``damping`` and restarts at the
seeds otherwise. Its stationary distribution is approximated by forward push (Andersen, Chung
and Lang, 2006): every node holds an estimate and a residual, the mass not yet spread; pushing
a node moves ``1 - damping`` of its residual into its estimate and spreads the rest over its
links. A node is pushed only while its residual is at least ``tolerance`` times its number of
links, so a push settles mass in proportion to what it costs: the whole walk visits at most
``1 / ((1 - damping) * tolerance)`` links, however large the graph, and stays near its seeds.
A hub entity (named in half the corpus) is pushed only once a lot of mass reaches it, which is
what it deserves: it bridges nothing. Nodes over the threshold are pushed together, in rounds
(pushing part of a residual keeps the walk's invariant, so a round is a series of exact
pushes). The estimate never exceeds the exact score, and all it misses is the residual left.

The links depend only on the snapshot and the two weights, so they are built once per graph
version (`ragwright.graph.walk_cache`); `personalized_pagerank` is the exact walk (power
iteration over the whole graph), the reference the local one is checked against.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ragwright.graph.adjacency import Adjacency
from ragwright.models.graph import GraphSnapshot

Scores = npt.NDArray[np.float32]
Int64s = npt.NDArray[np.int64]
Float64s = npt.NDArray[np.float64]

#: Power iterations at most, and the L1 change under which the exact walk has converged.
MAX_ITERATIONS = 50
TOLERANCE = 1e-6
#: Push rounds at most (a safety bound: the threshold ends the walk long before).
MAX_ROUNDS = 200


@dataclass(frozen=True, slots=True)
class WalkGraph:
    """A snapshot's links as transition probabilities (row ``u``: where a walker at ``u``
    goes, and with what chance) and what seeding needs: how many chunks mention each entity,
    and each chunk's entities with their mention counts."""

    version: str
    entities: int
    chunks: int
    transition: Adjacency
    chunk_entities: Adjacency
    document_frequency: Scores
    #: Each thread's estimate and residual arrays (one per node), zero between walks: a walk
    #: clears what it touched, so none allocates (or zeroes) arrays as large as the graph.
    scratch: threading.local = field(default_factory=threading.local, compare=False)

    @property
    def nodes(self) -> int:
        return self.entities + self.chunks

    def buffers(self) -> tuple[Float64s, Float64s]:
        arrays: tuple[Float64s, Float64s] | None = getattr(self.scratch, "arrays", None)
        if arrays is None:
            arrays = np.zeros(self.nodes), np.zeros(self.nodes)
            self.scratch.arrays = arrays
        return arrays


@dataclass(frozen=True, slots=True)
class LocalScores:
    """The nodes the local walk reached (ascending) and their estimated scores; ``residual``
    is the mass it left unspread (the most the estimates miss, summed)."""

    nodes: Int64s
    scores: Float64s
    residual: float


def build_walk_graph(
    snapshot: GraphSnapshot, *, relation_weight: float, synonym_weight: float
) -> WalkGraph:
    """The walk's links for ``snapshot``."""
    entities, chunks = snapshot.entity_count, snapshot.chunk_count
    links = Adjacency.from_coordinates(
        *walk_links(snapshot, relation_weight, synonym_weight),
        (entities + chunks, entities + chunks),
    )
    chunk_entities = Adjacency.from_coordinates(
        snapshot.mention_chunk, snapshot.mention_entity, snapshot.mention_count, (chunks, entities)
    )
    frequency = np.bincount(snapshot.mention_entity, minlength=entities).astype(np.float32)
    return WalkGraph(
        snapshot.version, entities, chunks, links.normalized(), chunk_entities, frequency
    )


def walk_links(
    snapshot: GraphSnapshot, relation_weight: float, synonym_weight: float
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], Scores]:
    """Every link of the walk, both ways, as (row, column, weight) coordinates (a pair
    linked twice, by a relation and a synonym link, adds up)."""
    mention_weight = np.log1p(snapshot.mention_count).astype(np.float32)
    chunk_nodes = snapshot.mention_chunk + np.int32(snapshot.entity_count)
    rows = [snapshot.mention_entity, chunk_nodes]
    cols = [chunk_nodes, snapshot.mention_entity]
    data = [mention_weight, mention_weight]
    for source, target, weight, factor in (
        (snapshot.edge_source, snapshot.edge_target, snapshot.edge_weight, relation_weight),
        (snapshot.synonym_source, snapshot.synonym_target, snapshot.synonym_weight, synonym_weight),
    ):
        if factor > 0 and len(source):
            rows += [source, target]
            cols += [target, source]
            data += [weight * np.float32(factor)] * 2
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(data)


def local_pagerank(
    graph: WalkGraph, seeds: Int64s, weights: Float64s, damping: float, tolerance: float
) -> LocalScores:
    """The walk restarting at ``seeds`` (node indices; ``weights`` non-negative, normalized
    here; a node given twice adds up) by forward push (see the module)."""
    total = float(weights.sum())
    if total <= 0 or len(seeds) == 0:
        return LocalScores(np.zeros(0, np.int64), np.zeros(0, np.float64), 0.0)
    estimate, residual = graph.buffers()
    reached = [np.unique(seeds)]
    try:
        np.add.at(residual, seeds, weights / total)
        _push(graph, estimate, residual, reached, damping, tolerance)
        touched = np.unique(np.concatenate(reached))
        kept = touched[estimate[touched] > 0]
        return LocalScores(kept, estimate[kept], float(residual[touched].sum()))
    finally:
        for nodes in reached:  # zero again for the thread's next walk
            estimate[nodes] = 0.0
            residual[nodes] = 0.0


def _push(
    graph: WalkGraph,
    estimate: Float64s,
    residual: Float64s,
    reached: list[Int64s],
    damping: float,
    tolerance: float,
) -> None:
    """Push rounds until no node is over the threshold; ``reached`` gets every node touched."""
    pointers = graph.transition.pointers
    candidates = reached[0]
    for _ in range(MAX_ROUNDS):
        links = np.maximum(pointers[candidates + 1] - pointers[candidates], 1)
        active = candidates[residual[candidates] >= tolerance * links]
        if len(active) == 0:
            return
        mass = residual[active]
        residual[active] = 0.0
        estimate[active] += (1.0 - damping) * mass
        owner, targets, chances = graph.transition.gather(active)
        candidates, position = np.unique(targets, return_inverse=True)
        residual[candidates] += np.bincount(
            position, weights=damping * mass[owner] * chances, minlength=len(candidates)
        )
        reached.append(candidates.astype(np.int64))


def personalized_pagerank(graph: WalkGraph, seeds: Scores, damping: float) -> Scores:
    """The exact walk restarting at ``seeds`` (non-negative weights over all nodes,
    normalized here) by power iteration; all zeros when the seeds are."""
    total = float(seeds.sum())
    if total <= 0:
        return np.zeros_like(seeds)
    restart = (seeds / total).astype(np.float64)
    transition = graph.transition
    owner = np.repeat(np.arange(transition.rows), transition.counts)
    scores = restart
    for _ in range(MAX_ITERATIONS):
        spread = np.bincount(
            transition.columns, weights=transition.values * scores[owner], minlength=graph.nodes
        )
        updated = (1.0 - damping) * restart + damping * spread
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < TOLERANCE:
            break
    return scores.astype(np.float32)
