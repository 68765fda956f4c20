"""Graph search: rank chunks by personalized PageRank from the entities a query brings up.

The seeds: the top ``seed_hits`` hybrid hits' chunks themselves (``chunk_seed_weight`` of the
mass, each hit weighted by 1/rank), and the rest on entities, mixed by ``query_weight``: the
entities the query names (`ragwright.graph.linking`) and those the hits mention (weighted by
1/rank and by how often the hit names each). Entity seeds are scaled by node specificity,
``1 / chunks_mentioning(entity) ** specificity``, so an entity named in half the corpus
("American") seeds little. Seeding the hits' chunks keeps the walk's top near hybrid's top;
their entities carry it one hop further, to the chunks a multi-hop question also needs. The
walk (`ragwright.graph.ppr`, local: its cost depends on the seeds' neighbourhood, not on the
graph's size) then spreads the seeds over entities and chunks; chunks rank by the mass they
hold. Only chunk ids and their order
leave this module: the caller fuses the ranking with the hybrid one by rank, and nothing the
graph derives (names, scores) enters the chunk ranking as text or as similarity.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.graph.fact_linking import FactLinker
from ragwright.graph.linking import EntityIndex, link_query
from ragwright.graph.ppr import WalkGraph, local_pagerank
from ragwright.graph.settings import GraphSettings
from ragwright.graph.walk_cache import WalkGraphCache
from ragwright.models.graph import GraphSnapshot
from ragwright.ports import Extractor

__all__ = ["GraphSearch", "GraphSettings"]

Int64s = npt.NDArray[np.int64]
Float64s = npt.NDArray[np.float64]
#: Seed mass on some nodes: (node indices, weights); a node may appear twice (weights add).
Seeds = tuple[Int64s, Float64s]


class GraphSearch:
    """Ranks a snapshot's chunks for a query; the derived links are cached by graph version,
    so one instance serves many queries (and threads)."""

    def __init__(
        self, query_extractor: Extractor | None = None, fact_linker: FactLinker | None = None
    ) -> None:
        """``query_extractor`` also links what it finds in the query (by default the n-gram
        match alone, which finds every contiguous name an extractor could); ``fact_linker``
        links the query to the graph's typed facts (with ``fact_weight`` above 0)."""
        self.query_extractor = query_extractor
        self.fact_linker = fact_linker
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
        nodes, weights = self._seeds(query, seed_chunks, snapshot, graph, settings)
        walked = local_pagerank(graph, nodes, weights, settings.damping, settings.tolerance)
        on_chunks = walked.nodes >= graph.entities
        rows = walked.nodes[on_chunks] - graph.entities
        return _top(rows, walked.scores[on_chunks], snapshot.chunk_ids, depth)

    def _seeds(
        self,
        query: str,
        seed_chunks: Sequence[str],
        snapshot: GraphSnapshot,
        graph: WalkGraph,
        settings: GraphSettings,
    ) -> Seeds:
        linked = np.array(
            sorted(link_query(query, snapshot, self._entities, self.query_extractor)),
            dtype=np.int64,
        )
        named = (linked, np.ones(len(linked), dtype=np.float64))
        hits = self._rows_of(seed_chunks[: settings.seed_hits], snapshot)
        from_hits = _hit_entities(hits, graph)
        query_part, hits_part = _mixed(
            _specific(named, graph, settings), _specific(from_hits, graph, settings),
            settings.query_weight,
        )  # fmt: skip
        entities = _joined(query_part, hits_part)
        if self.fact_linker is not None and settings.fact_weight > 0:
            facts = self.fact_linker.link(query, snapshot, settings.fact_top)
            from_facts, entities = _mixed(
                _specific(facts, graph, settings), entities, settings.fact_weight
            )
            entities = _joined(from_facts, entities)
        on_chunks, on_entities = _mixed(
            _hit_chunks(hits, graph, settings.seed_decay), entities, settings.chunk_seed_weight
        )
        return _joined(on_entities, on_chunks)

    def _rows_of(
        self, chunk_ids: Sequence[str], snapshot: GraphSnapshot
    ) -> list[tuple[int, int | None]]:
        """(rank, chunk row) of each hit, rank from 1; a chunk with no mention has no row."""
        rows = self._chunk_rows(snapshot)
        return [(rank, rows.get(chunk_id)) for rank, chunk_id in enumerate(chunk_ids, start=1)]

    def _chunk_rows(self, snapshot: GraphSnapshot) -> Mapping[str, int]:
        with self._rows_lock:
            if self._rows_version != snapshot.version:
                self._rows = {chunk_id: row for row, chunk_id in enumerate(snapshot.chunk_ids)}
                self._rows_version = snapshot.version
            return self._rows


def _hit_entities(hits: Sequence[tuple[int, int | None]], graph: WalkGraph) -> Seeds:
    """The hits' entities, each weighted by how often the hit names it over the hit's rank."""
    ranked = [(rank, row) for rank, row in hits if row is not None]
    if not ranked:
        return _nothing()
    rows = np.array([row for _, row in ranked], dtype=np.int64)
    ranks = np.array([rank for rank, _ in ranked], dtype=np.float64)
    owner, entities, counts = graph.chunk_entities.gather(rows)
    return entities.astype(np.int64), counts.astype(np.float64) / ranks[owner]


def _hit_chunks(hits: Sequence[tuple[int, int | None]], graph: WalkGraph, decay: float) -> Seeds:
    """The hits' own chunks (passage nodes), each weighted by rank ** -decay."""
    ranked = [(rank, row) for rank, row in hits if row is not None]
    nodes = np.array([graph.entities + row for _, row in ranked], dtype=np.int64)
    return nodes, np.array([float(rank) ** -decay for rank, _ in ranked], dtype=np.float64)


def _specific(seeds: Seeds, graph: WalkGraph, settings: GraphSettings) -> Seeds:
    """Entity seeds divided by (chunks mentioning the entity) ** specificity."""
    entities, weights = seeds
    frequency = np.maximum(graph.document_frequency[entities].astype(np.float64), 1.0)
    return entities, weights * np.power(frequency, -settings.specificity)


def _mixed(first: Seeds, second: Seeds, share: float) -> tuple[Seeds, Seeds]:
    """Both scaled so that ``share`` of their mass is on ``first`` and the rest on ``second``
    (all of it on one side when the other is empty)."""
    first_total, second_total = float(first[1].sum()), float(second[1].sum())
    if first_total > 0:
        first = first[0], first[1] / first_total * (share if second_total > 0 else 1.0)
    if second_total > 0:
        second = second[0], second[1] / second_total * ((1 - share) if first_total > 0 else 1.0)
    return first, second


def _joined(first: Seeds, second: Seeds) -> Seeds:
    return np.concatenate([first[0], second[0]]), np.concatenate([first[1], second[1]])


def _nothing() -> Seeds:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


def _top(
    rows: Int64s, scores: Float64s, chunk_ids: Sequence[str], depth: int
) -> list[tuple[str, float]]:
    positive = np.flatnonzero(scores > 0)
    if len(positive) > depth:  # all those tied with the last one kept, so ties stay stable
        cutoff = np.partition(scores[positive], len(positive) - depth)[len(positive) - depth]
        positive = positive[scores[positive] >= cutoff]
    found = [(chunk_ids[int(rows[i])], float(scores[i])) for i in positive.tolist()]
    return sorted(found, key=lambda pair: (-pair[1], pair[0]))[:depth]
