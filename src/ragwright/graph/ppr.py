"""Personalized PageRank over the entity–chunk graph of a `GraphSnapshot`.

One node per entity and per chunk (entities first). Links, symmetric:

- entity–chunk, weighted by how often the chunk mentions the entity (``log1p``: a chunk that
  names its subject ten times is about it, not ten times as much about it);
- entity–entity, the relation edges' aggregate weight times ``relation_weight``;
- entity–entity synonym links times ``synonym_weight``.

The walk restarts at the seed distribution with probability ``1 - damping``; the result is
the stationary distribution (power iteration on the column-stochastic matrix). The matrix
depends only on the snapshot and those two weights, so it is built once per graph version.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.errors import MissingDependencyError
from ragwright.graph.model import GraphSnapshot

Scores = npt.NDArray[np.float32]

#: Power iterations at most, and the L1 change under which the walk has converged.
MAX_ITERATIONS = 50
TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True)
class WalkGraph:
    """A snapshot's transition matrix (scipy CSR, column-stochastic) and what seeding needs:
    how many chunks mention each entity, and each chunk's entities (CSR, chunk × entity)."""

    version: str
    entities: int
    chunks: int
    transition: Any  # scipy.sparse.csr_matrix
    chunk_entities: Any
    document_frequency: Scores


def build_walk_graph(
    snapshot: GraphSnapshot, *, relation_weight: float, synonym_weight: float
) -> WalkGraph:
    """The walk's matrices for ``snapshot``."""
    sparse = _scipy_sparse()
    entities, chunks = snapshot.entity_count, snapshot.chunk_count
    size = entities + chunks
    mention_weight = np.log1p(snapshot.mention_count).astype(np.float32)
    rows = [snapshot.mention_entity, snapshot.mention_chunk + entities]
    cols = [snapshot.mention_chunk + entities, snapshot.mention_entity]
    data = [mention_weight, mention_weight]
    for source, target, weight, factor in (
        (snapshot.edge_source, snapshot.edge_target, snapshot.edge_weight, relation_weight),
        (snapshot.synonym_source, snapshot.synonym_target, snapshot.synonym_weight, synonym_weight),
    ):
        if factor > 0 and len(source):
            rows += [source, target]
            cols += [target, source]
            data += [weight * np.float32(factor)] * 2
    adjacency = sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
        shape=(size, size),
        dtype=np.float32,
    )
    degree = np.asarray(adjacency.sum(axis=0)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    transition = (adjacency @ sparse.diags(inverse.astype(np.float32))).tocsr()
    chunk_entities = sparse.csr_matrix(
        (snapshot.mention_count, (snapshot.mention_chunk, snapshot.mention_entity)),
        shape=(chunks, entities),
        dtype=np.float32,
    )
    frequency = np.bincount(snapshot.mention_entity, minlength=entities).astype(np.float32)
    return WalkGraph(snapshot.version, entities, chunks, transition, chunk_entities, frequency)


def personalized_pagerank(graph: WalkGraph, seeds: Scores, damping: float) -> Scores:
    """The stationary distribution of the walk restarting at ``seeds`` (any non-negative
    weights over all nodes, normalized here); all zeros when the seeds are."""
    total = float(seeds.sum())
    if total <= 0:
        return np.zeros_like(seeds)
    restart = (seeds / total).astype(np.float32)
    scores = restart
    transition = graph.transition
    for _ in range(MAX_ITERATIONS):
        updated = (1.0 - damping) * restart + damping * (transition @ scores)
        change = float(np.abs(updated - scores).sum())
        scores = updated.astype(np.float32, copy=False)
        if change < TOLERANCE:
            break
    return scores


class WalkGraphCache:
    """The walk graph of the latest snapshot, rebuilt when its version or weights change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, float, float] | None = None
        self._graph: WalkGraph | None = None

    def get(
        self, snapshot: GraphSnapshot, *, relation_weight: float, synonym_weight: float
    ) -> WalkGraph:
        key = (snapshot.version, relation_weight, synonym_weight)
        with self._lock:
            if self._graph is None or self._key != key:
                self._graph = build_walk_graph(
                    snapshot, relation_weight=relation_weight, synonym_weight=synonym_weight
                )
                self._key = key
            return self._graph


def _scipy_sparse() -> Any:
    try:
        from scipy import sparse
    except ImportError as error:
        raise MissingDependencyError("graph search", "pip install 'ragwright[graph]'") from error
    return sparse
