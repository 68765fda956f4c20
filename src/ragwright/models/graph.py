"""The graph's immutable values: what an extractor finds in a chunk, and the read-only
snapshot graph search runs on. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Indices = npt.NDArray[np.int32]
Weights = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of an entity in a chunk: ``chunk.text[start:end] == text``."""

    start: int
    end: int
    text: str
    #: The normalized entity key (`ragwright.graph.keys.entity_key`): mentions sharing a key
    #: are the same entity.
    key: str
    #: The entity type, e.g. ``PERSON``, ``ORG``, ``GPE`` (spaCy's labels) or an ontology type.
    label: str


@dataclass(frozen=True, slots=True)
class Relation:
    """Evidence in one chunk that two entities are related. ``source`` and ``target`` are
    entity keys of mentions in the same chunk; ``weight`` is in (0, 1]."""

    source: str
    target: str
    label: str
    weight: float


#: Relation labels that say only that two entities were named together (the co-occurrence
#: fallback); every other label is a typed fact's predicate.
COOCCURRENCE_LABELS = frozenset({"co_sentence", "co_chunk"})


@dataclass(frozen=True, slots=True)
class TypedFact:
    """A subject–predicate–object fact the graph holds (one or more chunks state it):
    entity keys and the predicate's text, e.g. ``("ed wood", "born in", "poughkeepsie")``."""

    source: str
    predicate: str
    target: str


@dataclass(frozen=True, slots=True)
class StatedFact:
    """A typed fact as one chunk states it, with the text its vector embeds ("subject
    predicate object", by the chunk's own surface forms: so the text, like the fact, is
    evidence of that chunk alone)."""

    chunk_id: str
    fact: TypedFact
    text: str


@dataclass(frozen=True, slots=True)
class FactVectors:
    """The stored vectors of the typed facts, one row per (chunk, fact) in one embedding
    space: ``facts[i]`` embeds to ``vectors[i]``. ``version`` changes whenever a row may have
    (what a reader caches them by)."""

    version: str
    facts: tuple[TypedFact, ...]
    vectors: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ChunkFacts:
    """Everything one extractor found in one chunk. ``extractor`` (the extractor's id, e.g.
    ``spacy:en_core_web_sm-3.8.0:1``) is part of every stored fact: facts from another
    extractor, or another version of it, are never mixed with these."""

    chunk_id: str
    extractor: str
    mentions: tuple[Mention, ...]
    relations: tuple[Relation, ...]


@dataclass(frozen=True, slots=True)
class GraphSnapshot:
    """The graph as graph search reads it: entities, chunks and the weighted links between
    them as parallel arrays (COO form, ready for scipy.sparse), at one graph ``version``.

    ``version`` changes whenever any fact changes, so anything derived from a snapshot
    (sparse matrices, PageRank inputs) can be cached by it.
    """

    version: str
    #: Entity index -> normalized key, and -> display name (its most frequent surface form).
    entity_keys: tuple[str, ...]
    entity_names: tuple[str, ...]
    #: Chunk index -> chunk id (only chunks with at least one mention).
    chunk_ids: tuple[str, ...]
    #: Entity-chunk incidence: entity ``mention_entity[i]`` is mentioned in chunk
    #: ``mention_chunk[i]`` ``mention_count[i]`` times.
    mention_entity: Indices
    mention_chunk: Indices
    mention_count: Weights
    #: Entity-entity edges (``edge_source < edge_target``), aggregate weight from the
    #: relations' evidence (capped by the store, so no edge dominates).
    edge_source: Indices
    edge_target: Indices
    edge_weight: Weights
    #: Soft synonym links between near-duplicate entities (entity resolution, stage 2),
    #: stored as links rather than merges so they can be undone.
    synonym_source: Indices
    synonym_target: Indices
    synonym_weight: Weights
    #: How this snapshot differs from an earlier one, when a store made it by patching that
    #: one (so what is derived from it can be patched too); None when read whole.
    change: SnapshotChange | None = field(default=None, compare=False, repr=False)

    @property
    def entity_count(self) -> int:
        return len(self.entity_keys)

    @property
    def chunk_count(self) -> int:
        return len(self.chunk_ids)


@dataclass(frozen=True, slots=True)
class SnapshotChange:
    """A snapshot against the one at version ``base``: each old entity's and old chunk's
    index now (-1: gone), and the entities and chunks (indices now) whose links may differ;
    every other entity and chunk has the same links as before, renumbered."""

    base: str
    entity_map: Positions
    chunk_map: Positions
    entities: Positions
    chunks: Positions
