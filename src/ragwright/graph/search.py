"""Graph search: rank chunks by personalized PageRank from the entities a query brings up.

The seeds: the top ``seed_hits`` hybrid hits' chunks themselves (``chunk_seed_weight`` of the
mass, each hit weighted by 1/rank), and the rest on entities, mixed by ``query_weight``: the
entities the query names (`ragwright.graph.linking`) and those the hits mention (weighted by
1/rank and by how often the hit names each). Entity seeds are scaled by node specificity,
``1 / chunks_mentioning(entity) ** specificity``, so an entity named in half the corpus
("American") seeds little. Seeding the hits' chunks keeps the walk's top near hybrid's top;
their entities carry it one hop further, to the chunks a multi-hop question also needs. The
walk (`ragwright.graph.ppr`) then spreads the seeds over entities and chunks; chunks rank by
the mass they hold. Only chunk ids and their order
leave this module: the caller fuses the ranking with the hybrid one by rank, and nothing the
graph derives (names, scores) enters the chunk ranking as text or as similarity.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np

from ragwright.graph.linking import EntityIndex, link_query
from ragwright.graph.model import GraphSnapshot
from ragwright.graph.ppr import Scores, WalkGraph, WalkGraphCache, personalized_pagerank
from ragwright.graph.settings import GraphSettings
from ragwright.ports import Extractor

__all__ = ["GraphSearch", "GraphSettings"]


class GraphSearch:
    """Ranks a snapshot's chunks for a query; the derived matrices are cached by graph
    version, so one instance serves many queries (and threads)."""

    def __init__(self, query_extractor: Extractor | None = None) -> None:
        """``query_extractor`` also links what it finds in the query (by default the n-gram
        match alone, which finds every contiguous name an extractor could)."""
        self.query_extractor = query_extractor
        self._walks = WalkGraphCache()
        self._entities = EntityIndex()
        self._rows_lock = threading.Lock()
        self._rows_version: str | None = None
        self._rows: Mapping[str, int] = {}

    def rank(
        self,
        query: str,
        seed_chunks: Sequence[str],
        snapshot: GraphSnapshot,
        settings: GraphSettings,
        depth: int,
    ) -> list[tuple[str, float]]:
        """At most ``depth`` (chunk id, walk score) pairs, best first (ties by chunk id);
        ``seed_chunks`` are the hybrid ranking's chunk ids, best first."""
        graph = self._walks.get(
            snapshot,
            relation_weight=settings.relation_weight,
            synonym_weight=settings.synonym_weight,
        )
        seeds = self._seeds(query, seed_chunks, snapshot, graph, settings)
        scores = personalized_pagerank(graph, seeds, settings.damping)[graph.entities :]
        return _top(scores, snapshot.chunk_ids, depth)

    def _seeds(
        self,
        query: str,
        seed_chunks: Sequence[str],
        snapshot: GraphSnapshot,
        graph: WalkGraph,
        settings: GraphSettings,
    ) -> Scores:
        specificity = np.power(np.maximum(graph.document_frequency, 1.0), -settings.specificity)
        named = np.zeros(graph.entities, dtype=np.float32)
        linked = list(link_query(query, snapshot, self._entities, self.query_extractor))
        named[linked] = 1.0
        named *= specificity
        hits = seed_chunks[: settings.seed_hits]
        from_hits = self._hit_entities(hits, snapshot, graph) * specificity
        query_part, hits_part = _mixed(named, from_hits, settings.query_weight)
        entities = query_part + hits_part
        on_chunks, on_entities = _mixed(
            self._hit_chunks(hits, snapshot, graph), entities, settings.chunk_seed_weight
        )
        return np.concatenate([on_entities, on_chunks])  # the walk's node order

    def _hit_entities(
        self, chunk_ids: Sequence[str], snapshot: GraphSnapshot, graph: WalkGraph
    ) -> Scores:
        rows = self._chunk_rows(snapshot)
        weights = np.zeros(graph.entities, dtype=np.float32)
        for rank, chunk_id in enumerate(chunk_ids, start=1):
            row = rows.get(chunk_id)
            if row is not None:
                entities = graph.chunk_entities[row]
                weights[entities.indices] += entities.data / rank
        return weights

    def _hit_chunks(
        self, chunk_ids: Sequence[str], snapshot: GraphSnapshot, graph: WalkGraph
    ) -> Scores:
        rows = self._chunk_rows(snapshot)
        weights = np.zeros(graph.chunks, dtype=np.float32)
        for rank, chunk_id in enumerate(chunk_ids, start=1):
            row = rows.get(chunk_id)
            if row is not None:
                weights[row] += 1.0 / rank
        return weights

    def _chunk_rows(self, snapshot: GraphSnapshot) -> Mapping[str, int]:
        with self._rows_lock:
            if self._rows_version != snapshot.version:
                self._rows = {chunk_id: row for row, chunk_id in enumerate(snapshot.chunk_ids)}
                self._rows_version = snapshot.version
            return self._rows


def _mixed(first: Scores, second: Scores, share: float) -> tuple[Scores, Scores]:
    """Both scaled so that ``share`` of their mass is on ``first`` and the rest on ``second``
    (all of it on one side when the other is empty)."""
    first_total, second_total = float(first.sum()), float(second.sum())
    if first_total > 0:
        first = first / first_total * (share if second_total > 0 else 1.0)
    if second_total > 0:
        second = second / second_total * ((1 - share) if first_total > 0 else 1.0)
    return first, second


def _top(scores: Scores, chunk_ids: Sequence[str], depth: int) -> list[tuple[str, float]]:
    positive = np.flatnonzero(scores > 0)
    if len(positive) > depth:  # all those tied with the last one kept, so ties stay stable
        cutoff = np.partition(scores[positive], len(positive) - depth)[len(positive) - depth]
        positive = positive[scores[positive] >= cutoff]
    order = sorted(positive.tolist(), key=lambda row: (-float(scores[row]), chunk_ids[row]))
    return [(chunk_ids[row], float(scores[row])) for row in order[:depth]]
