"""Query-to-fact linking: the typed facts nearest a query, by the index's embedder.

Each fact is embedded as the text "subject predicate object", with the same embedder, and so
in the same space, as the index's chunks. The query's vector is compared with every fact's (a
dot product: the index's vectors are normalized) and the entities of the ``top`` nearest
facts seed graph search, weighted by similarity (HippoRAG 2 links queries to facts rather
than to entity nodes: "director of Sinister" finds the fact "Scott Derrickson is director of
Sinister" where no entity is named).

A store's graph keeps the vectors (`FactVectorSource`): `graph build` embeds each fact as its
chunk states it (`stated_facts`, by the chunk's own surface forms) and stores the vector as
evidence of that chunk, so linking embeds nothing but the query. A fact several chunks state
has several vectors; it counts once, by its nearest. A graph without stored vectors (one
held in memory, `MemoryGraph`) has its facts embedded on first use, by display names, and
kept by fact text: a new graph version embeds only the facts never embedded.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragwright.models.graph import (
    COOCCURRENCE_LABELS,
    ChunkFacts,
    FactVectors,
    GraphSnapshot,
    StatedFact,
    TypedFact,
)
from ragwright.ports import Embedder, FactSource, FactVectorSource

Int64s = npt.NDArray[np.int64]
Float64s = npt.NDArray[np.float64]
#: Facts embedded per call to the embedder.
BATCH = 256


@dataclass(frozen=True, slots=True)
class _Facts:
    version: str
    sources: Int64s
    targets: Int64s
    #: Row -> the fact it embeds (rows of one fact share it).
    facts: Int64s
    vectors: npt.NDArray[np.float32]


def fact_text(fact: TypedFact, names: dict[str, str]) -> str:
    """The text a fact is embedded as: "subject predicate object", by display names."""
    subject, target = names.get(fact.source, fact.source), names.get(fact.target, fact.target)
    return f"{subject} {fact.predicate} {target}"


def stated_facts(facts: ChunkFacts) -> list[StatedFact]:
    """The typed facts one chunk states (as stores keep their vectors: endpoints in key order,
    an endpoint no mention of the chunk names is no evidence), each with its text by the
    chunk's own forms (an entity's most frequent in the chunk; ties: the smallest), subject
    first as the chunk states it."""
    forms: dict[str, Counter[str]] = {}
    for mention in facts.mentions:
        forms.setdefault(mention.key, Counter())[mention.text] += 1
    names = {key: min(c, key=lambda form: (-c[form], form)) for key, c in forms.items()}
    found: dict[TypedFact, StatedFact] = {}
    for relation in facts.relations:
        ends = relation.source, relation.target
        if relation.label in COOCCURRENCE_LABELS or ends[0] == ends[1]:
            continue
        if not all(end in names for end in ends):
            continue
        first, second = sorted(ends)
        fact = TypedFact(first, relation.label, second)
        stated = TypedFact(relation.source, relation.label, relation.target)
        found.setdefault(fact, StatedFact(facts.chunk_id, fact, fact_text(stated, names)))
    return [found[fact] for fact in sorted(found, key=lambda f: (f.source, f.predicate, f.target))]


class FactLinker:
    """Links queries to the facts of ``source`` embedded by ``embedder()`` (the index's
    checked embedder, made on first use; the facts' vectors are cached per graph version, and
    one instance serves many queries and threads)."""

    def __init__(
        self,
        source: FactSource,
        embedder: Callable[[], Embedder],
        stored: FactVectorSource | None = None,
    ) -> None:
        self.source = source
        self.stored = stored
        self._embedder = embedder
        self._lock = threading.Lock()
        self._facts: _Facts | None = None
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    @classmethod
    def for_graph(cls, graph: object, embedder: Callable[[], Embedder]) -> FactLinker | None:
        """The linker of ``graph`` (None when it holds no typed facts), reading the vectors
        it stores when it keeps them."""
        if not isinstance(graph, FactSource):
            return None
        return cls(graph, embedder, graph if isinstance(graph, FactVectorSource) else None)

    def link(self, query: str, snapshot: GraphSnapshot, top: int) -> tuple[Int64s, Float64s]:
        """The entities of the ``top`` facts nearest ``query``: (entity indices, weights),
        an entity of several facts given once per fact (the weights add up)."""
        facts = self._of(snapshot)
        if top <= 0 or len(facts.sources) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        query_vector = np.asarray(self._embedder().embed_query(query), dtype=np.float32).reshape(-1)
        similarity = facts.vectors @ query_vector
        order = np.argsort(-similarity, kind="stable")
        # A fact stated in several chunks counts once, by its nearest vector.
        _, first = np.unique(facts.facts[order], return_index=True)
        best = order[np.sort(first)[:top]]
        weights = np.maximum(similarity[best].astype(np.float64), 0.0)
        return (
            np.concatenate([facts.sources[best], facts.targets[best]]),
            np.concatenate([weights, weights]),
        )

    def _of(self, snapshot: GraphSnapshot) -> _Facts:
        with self._lock:
            if self.stored is not None:
                version = f"{snapshot.version}/{self.stored.fact_vector_version()}"
                if self._facts is None or self._facts.version != version:
                    space = self._embedder().space
                    self._facts = _from_stored(version, self.stored.fact_vectors(space), snapshot)
            elif self._facts is None or self._facts.version != snapshot.version:
                self._facts = self._build(snapshot)
            return self._facts

    def _build(self, snapshot: GraphSnapshot) -> _Facts:
        entity = {key: index for index, key in enumerate(snapshot.entity_keys)}
        names = dict(zip(snapshot.entity_keys, snapshot.entity_names, strict=True))
        facts = [f for f in self.source.typed_facts() if f.source in entity and f.target in entity]
        texts = [fact_text(fact, names) for fact in facts]
        self._embed_missing(texts)
        dimension = self._embedder().space.dimension
        vectors = (
            np.stack([self._vectors[text] for text in texts])
            if texts
            else np.zeros((0, dimension), np.float32)
        )
        self._vectors = {text: self._vectors[text] for text in texts}  # forget the gone ones
        return _Facts(
            snapshot.version,
            np.array([entity[f.source] for f in facts], dtype=np.int64),
            np.array([entity[f.target] for f in facts], dtype=np.int64),
            np.arange(len(facts), dtype=np.int64),
            vectors,
        )

    def _embed_missing(self, texts: Sequence[str]) -> None:
        missing = sorted({text for text in texts if text not in self._vectors})
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            vectors = np.asarray(self._embedder().embed_documents(batch), dtype=np.float32)
            self._vectors.update(zip(batch, vectors, strict=True))


def _from_stored(version: str, stored: FactVectors, snapshot: GraphSnapshot) -> _Facts:
    """The stored rows whose two entities are in ``snapshot``, as entity indices."""
    entity = {key: index for index, key in enumerate(snapshot.entity_keys)}
    keep = [i for i, f in enumerate(stored.facts) if f.source in entity and f.target in entity]
    ids: dict[TypedFact, int] = {}
    rows = [stored.facts[i] for i in keep]
    return _Facts(
        version,
        np.array([entity[f.source] for f in rows], dtype=np.int64),
        np.array([entity[f.target] for f in rows], dtype=np.int64),
        np.array([ids.setdefault(f, len(ids)) for f in rows], dtype=np.int64),
        stored.vectors[keep] if keep else stored.vectors[:0],
    )
