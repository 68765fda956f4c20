"""From extracted facts to the `GraphSnapshot` graph search reads, and `MemoryGraph`: the
in-memory `GraphSource` over a fixed set of facts (tests, benchmarks, a graph built outside a
store).

The aggregation rules, which every store's `GraphSource.graph_snapshot` follows too, so graph
search means the same thing on any backend:

- **Facts.** One `ChunkFacts` per extracted chunk, all from one extractor (one ``extractor``
  id); a chunk appears once. Mentions with an empty key are ignored.
- **Entities** are the distinct mention keys, sorted by key (entity index = position). An
  entity's display name is its most frequent surface form (ties: the smallest string).
- **Chunks** are the chunks with at least one mention, sorted by chunk id. A chunk extracted
  with nothing in it is known to be extracted but is not a node.
- **Mentions**: one incidence per (entity, chunk) pair, ``mention_count`` = how many times the
  chunk mentions the entity; sorted by (entity, chunk).
- **Edges**: one per unordered pair of distinct entities with relation evidence, stored with
  ``edge_source < edge_target`` (entity indexes); ``edge_weight`` = the sum of the evidence's
  weights over all chunks (and labels), capped at `EDGE_WEIGHT_CAP` so that two entities
  named together in many chunks do not dominate the walk. A relation whose endpoint is no
  mentioned entity (an LLM's inconsistent answer) is no evidence. Sorted by (source, target).
- **Synonyms** (entity resolution stage 2, soft links) come from outside the facts: pairs of
  keys with a similarity weight in (0, 1]; stored like edges (source < target, sorted), a
  pair given twice keeps its largest weight; a link naming an unknown key is ignored.
- **Version**: any string that changes whenever a fact or a synonym link changes. Here it is
  the SHA-256 of the canonical form of the facts and links (so equal inputs in any order
  give equal versions); a store may use a generation counter instead.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from ragwright.errors import ConfigError
from ragwright.models.graph import (
    COOCCURRENCE_LABELS,
    ChunkFacts,
    GraphSnapshot,
    Indices,
    TypedFact,
    Weights,
)

__all__ = ["EDGE_WEIGHT_CAP", "MemoryGraph", "SynonymLink", "build_snapshot"]

#: The most an entity-entity edge weighs, however much evidence it has.
EDGE_WEIGHT_CAP = 5.0

#: A soft synonym link: (key, key, weight in (0, 1]).
SynonymLink = tuple[str, str, float]


def build_snapshot(
    facts: Iterable[ChunkFacts], synonyms: Iterable[SynonymLink] = ()
) -> GraphSnapshot:
    """The snapshot of ``facts`` (and synonym links) by the module's aggregation rules.
    Deterministic: equal inputs in any order give equal snapshots. Facts from two extractors,
    or two facts for one chunk, are a `ConfigError`."""
    ordered = _checked(facts)
    links = sorted(synonyms)
    names: dict[str, Counter[str]] = defaultdict(Counter)
    counts: Counter[tuple[str, str]] = Counter()
    for chunk in ordered:
        for mention in chunk.mentions:
            if mention.key:
                names[mention.key][mention.text] += 1
                counts[(mention.key, chunk.chunk_id)] += 1
    keys = sorted(names)
    entity_of = {key: position for position, key in enumerate(keys)}
    chunk_ids = sorted({chunk_id for _, chunk_id in counts})
    chunk_of = {chunk_id: position for position, chunk_id in enumerate(chunk_ids)}
    incidence = sorted((entity_of[k], chunk_of[c], n) for (k, c), n in counts.items())
    edges = _edges(ordered, entity_of)
    synonym_edges = _synonyms(links, entity_of)
    return GraphSnapshot(
        version=_version(ordered, links),
        entity_keys=tuple(keys),
        entity_names=tuple(_display_name(names[key]) for key in keys),
        chunk_ids=tuple(chunk_ids),
        mention_entity=_indices(row[0] for row in incidence),
        mention_chunk=_indices(row[1] for row in incidence),
        mention_count=_weights(row[2] for row in incidence),
        edge_source=_indices(pair[0] for pair in edges),
        edge_target=_indices(pair[1] for pair in edges),
        edge_weight=_weights(min(weight, EDGE_WEIGHT_CAP) for weight in edges.values()),
        synonym_source=_indices(pair[0] for pair in synonym_edges),
        synonym_target=_indices(pair[1] for pair in synonym_edges),
        synonym_weight=_weights(synonym_edges.values()),
    )


class MemoryGraph:
    """A `GraphSource` over facts held in memory; `add` replaces a chunk's facts."""

    def __init__(
        self, facts: Iterable[ChunkFacts] = (), synonyms: Iterable[SynonymLink] = ()
    ) -> None:
        self._facts = {chunk.chunk_id: chunk for chunk in facts}
        self._synonyms = list(synonyms)
        self._snapshot: GraphSnapshot | None = None

    def add(self, facts: Iterable[ChunkFacts]) -> None:
        self._facts.update((chunk.chunk_id, chunk) for chunk in facts)
        self._snapshot = None

    def graph_version(self) -> str:
        return self.graph_snapshot().version

    def graph_snapshot(self) -> GraphSnapshot:
        if self._snapshot is None:
            self._snapshot = build_snapshot(self._facts.values(), self._synonyms)
        return self._snapshot

    def typed_facts(self) -> list[TypedFact]:
        return typed_facts(self._facts.values())


def typed_facts(facts: Iterable[ChunkFacts]) -> list[TypedFact]:
    """The distinct typed facts (relations other than co-occurrence) among ``facts``, sorted,
    each as its chunk states it (subject first: a fact stated both ways is two); a fact whose
    endpoint no mention of its chunk names is no evidence, as for edges."""
    found: set[TypedFact] = set()
    for chunk in facts:
        keys = {mention.key for mention in chunk.mentions}
        for r in chunk.relations:
            typed = r.label not in COOCCURRENCE_LABELS and r.source != r.target
            if typed and r.source in keys and r.target in keys:
                found.add(TypedFact(r.source, r.label, r.target))
    return sorted(found, key=lambda fact: (fact.source, fact.predicate, fact.target))


def _checked(facts: Iterable[ChunkFacts]) -> list[ChunkFacts]:
    ordered = sorted(facts, key=lambda chunk: chunk.chunk_id)
    extractors = sorted({chunk.extractor for chunk in ordered})
    if len(extractors) > 1:
        raise ConfigError(
            f"graph facts from several extractors ({', '.join(extractors)}) cannot make one "
            "graph; extract every chunk with the same extractor"
        )
    for previous, chunk in itertools.pairwise(ordered):
        if previous.chunk_id == chunk.chunk_id:
            raise ConfigError(f"two sets of graph facts for chunk {chunk.chunk_id!r}")
    return ordered


def _edges(facts: Sequence[ChunkFacts], entity_of: dict[str, int]) -> dict[tuple[int, int], float]:
    weights: dict[tuple[int, int], float] = defaultdict(float)
    for chunk in facts:
        for relation in chunk.relations:
            source, target = entity_of.get(relation.source), entity_of.get(relation.target)
            if source is None or target is None or source == target:
                continue
            weights[(min(source, target), max(source, target))] += relation.weight
    return dict(sorted(weights.items()))


def _synonyms(
    links: Sequence[SynonymLink], entity_of: dict[str, int]
) -> dict[tuple[int, int], float]:
    weights: dict[tuple[int, int], float] = {}
    for left, right, weight in links:
        a, b = entity_of.get(left), entity_of.get(right)
        if a is None or b is None or a == b:
            continue
        pair = (min(a, b), max(a, b))
        weights[pair] = max(weight, weights.get(pair, 0.0))
    return dict(sorted(weights.items()))


def _display_name(forms: Counter[str]) -> str:
    return min(forms, key=lambda form: (-forms[form], form))


def _version(facts: Sequence[ChunkFacts], links: Sequence[SynonymLink]) -> str:
    digest = hashlib.sha256()
    for chunk in facts:
        record = [
            chunk.chunk_id,
            chunk.extractor,
            [[m.start, m.end, m.text, m.key, m.label] for m in chunk.mentions],
            [[r.source, r.target, r.label, r.weight] for r in chunk.relations],
        ]
        digest.update(json.dumps(record, ensure_ascii=False).encode())
        digest.update(b"\n")
    digest.update(json.dumps(links).encode())
    return digest.hexdigest()[:32]


def _indices(values: Iterable[int]) -> Indices:
    return np.fromiter(values, dtype=np.int32)


def _weights(values: Iterable[float]) -> Weights:
    return np.fromiter(values, dtype=np.float32)
