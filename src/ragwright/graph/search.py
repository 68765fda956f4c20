"""Graph search: rank chunks by personalized PageRank over entity and passage nodes.

The walk restarts (HippoRAG 2's reset, with hybrid search as its dense part) at passage
nodes, ``chunk_seed_weight`` of the mass: the top ``seed_hits`` hybrid hits' chunks, each in
proportion to its hybrid score min-max normalized over the hybrid ranking, to the power
``seed_decay`` (so the hits hybrid is sure of hold most of it); and at entities, the rest,
mixed by ``query_weight``: the entities the query names (`ragwright.graph.linking`) and
those the first ``entity_hits`` hits mention (weighted like their hit's chunk and by how
often the hit names each), and with ``fact_weight`` above 0 the entities of the facts the
query is linked to. Entity seeds are scaled by node specificity, ``1 / chunks_mentioning(entity) **
specificity``, so an entity named in half the corpus ("American") seeds little. The walk
(`ragwright.graph.ppr`, local: its cost depends on the seeds' neighbourhood, not on the
graph's size) spreads the seeds over entities and chunks; chunks rank by the mass they hold.
So a passage hybrid ranks fifth that names an entity of its first hit gathers mass from
both, and can overtake the second: the walk ranks chunks itself instead of adding a
neighbour behind hybrid's. A seeded hit that mentions no entity is no node of the graph; it
keeps what an isolated node would, ``1 - damping`` of its seed, so the walk still ranks
every chunk it seeded. Only chunk ids and their order leave this module: the caller fuses
the ranking with the hybrid one by rank, and nothing the graph derives (names, scores)
enters the chunk ranking as text or as similarity.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ragwright.graph.fact_linking import FactLinker
from ragwright.graph.linking import EntityIndex, link_query
from ragwright.graph.named_hits import named_positions
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
        seed_scores: Sequence[float] = (),
    ) -> list[tuple[str, float]]:
        """At most ``depth`` (chunk id, walk score) pairs, best first (ties by chunk id);
        ``seed_chunks`` are the hybrid ranking's chunk ids, best first, ``seed_scores``
        their hybrid scores, one each (none given: each hit scores 1/rank)."""
        graph = self._walks.get(
            snapshot,
            relation_weight=settings.relation_weight,
            synonym_weight=settings.synonym_weight,
        )
        hits = self._rows_of(seed_chunks[: settings.seed_hits], snapshot)
        scores = seed_scores if len(seed_scores) else _reciprocal(len(seed_chunks))
        seeded = _passage_seeds(scores, len(hits), settings.seed_decay)
        passages, entities = _mixed(
            seeded,
            self._entity_seeds(query, hits, seeded[1], snapshot, graph, settings),
            settings.chunk_seed_weight,
        )
        rows = np.array([-1 if row is None else row for _, row in hits], dtype=np.int64)
        on_graph = rows[passages[0]] >= 0
        nodes, weights = _joined(
            entities, (graph.entities + rows[passages[0][on_graph]], passages[1][on_graph])
        )
        walked = local_pagerank(graph, nodes, weights, settings.damping, settings.tolerance)
        on_chunks = walked.nodes >= graph.entities
        found = _top(  # the walk normalized its seeds: its scores are scaled back
            walked.nodes[on_chunks] - graph.entities,
            walked.scores[on_chunks] * float(weights.sum()),
            snapshot.chunk_ids,
            depth,
        )
        isolated = passages[0][~on_graph].tolist(), passages[1][~on_graph].tolist()
        found += [
            (seed_chunks[at], (1 - settings.damping) * seed)
            for at, seed in zip(*isolated, strict=True)
        ]
        return sorted(found, key=lambda pair: (-pair[1], pair[0]))[:depth]

    def named_hits(
        self,
        query: str,
        seed_chunks: Sequence[str],
        snapshot: GraphSnapshot,
        settings: GraphSettings,
    ) -> list[int]:
        """The positions (from 0) of the first ``keep_named`` seed chunks that are the
        passages the query names (`ragwright.graph.named_hits`): they keep their places."""
        if not settings.keep_named:
            return []
        graph = self._walks.get(
            snapshot,
            relation_weight=settings.relation_weight,
            synonym_weight=settings.synonym_weight,
        )
        named = link_query(query, snapshot, self._entities, self.query_extractor)
        mentioned: list[set[int]] = []
        for _, row in self._rows_of(seed_chunks[: settings.keep_named], snapshot):
            if row is None:  # a chunk that mentions no entity
                mentioned.append(set())
                continue
            _, entities, _ = graph.chunk_entities.gather(np.array([row], dtype=np.int64))
            mentioned.append(set(entities.tolist()))
        return named_positions(named, mentioned)

    def bridging_keys(
        self,
        query: str,
        seed_chunks: Sequence[str],
        snapshot: GraphSnapshot,
        settings: GraphSettings,
    ) -> set[str]:
        """The keys of the entities the first ``bridge_hits`` seed chunks mention and the
        query does not name: the second hops a passage about them would be
        (`ragwright.graph.bridges`)."""
        if not settings.bridge_hits:
            return set()
        graph = self._walks.get(
            snapshot,
            relation_weight=settings.relation_weight,
            synonym_weight=settings.synonym_weight,
        )
        rows = [row for _, row in self._rows_of(seed_chunks[: settings.bridge_hits], snapshot)]
        on_graph = np.array([row for row in rows if row is not None], dtype=np.int64)
        if not len(on_graph):
            return set()
        _, entities, _ = graph.chunk_entities.gather(on_graph)
        named = link_query(query, snapshot, self._entities, self.query_extractor)
        return {snapshot.entity_keys[e] for e in set(entities.tolist()) - named}

    def _entity_seeds(
        self,
        query: str,
        hits: Sequence[tuple[int, int | None]],
        hit_weights: Float64s,
        snapshot: GraphSnapshot,
        graph: WalkGraph,
        settings: GraphSettings,
    ) -> Seeds:
        linked = np.array(
            sorted(link_query(query, snapshot, self._entities, self.query_extractor)),
            dtype=np.int64,
        )
        named = (linked, np.ones(len(linked), dtype=np.float64))
        from_hits = _hit_entities(hits[: settings.entity_hits], hit_weights, graph)
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
        return entities

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


def _hit_entities(
    hits: Sequence[tuple[int, int | None]], weights: Float64s, graph: WalkGraph
) -> Seeds:
    """The hits' entities, each weighted by how often the hit names it times the hit's own
    seed weight (``weights``, by rank)."""
    ranked = [(rank, row) for rank, row in hits if row is not None]
    if not ranked:
        return _nothing()
    rows = np.array([row for _, row in ranked], dtype=np.int64)
    hit_weights = weights[np.array([rank - 1 for rank, _ in ranked], dtype=np.int64)]
    owner, entities, counts = graph.chunk_entities.gather(rows)
    return entities.astype(np.int64), counts.astype(np.float64) * hit_weights[owner]


def _passage_seeds(scores: Sequence[float], count: int, decay: float) -> Seeds:
    """The first ``count`` hits' weights, by position: (score - lowest) / (highest - lowest)
    over the whole ranking, to the power ``seed_decay`` (all alike when the scores are)."""
    values = np.asarray(scores, dtype=np.float64)
    if not count or not len(values):
        return _nothing()
    low, high = float(values.min()), float(values.max())
    share = (values[:count] - low) / (high - low) if high > low else np.ones(count)
    return np.arange(count, dtype=np.int64), np.power(share, decay)


def _reciprocal(count: int) -> list[float]:
    return [1.0 / rank for rank in range(1, count + 1)]


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
    return [(chunk_ids[int(rows[i])], float(scores[i])) for i in positive.tolist()]
