"""The fact-vector conformance suite: every store that keeps the typed facts' vectors
(`FactVectorTarget`, `FactVectorSource`) passes it, beside `GraphContract`.

A store's test class inherits `FactVectorContract` and provides ``open_store`` as for the
other contracts. Facts come from `CapitalizedExtractor` over `GRAPH_CORPUS`; vectors from
`SpaceEmbedder`, a deterministic fake in the contract's space.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from ragwright.errors import EmbeddingSpaceMismatch, StoreError
from ragwright.graph.fact_linking import stated_facts
from ragwright.models import EmbeddingSpace
from ragwright.models.graph import StatedFact, TypedFact
from ragwright.pipeline.graph.fact_vectors import embed_fact_vectors
from ragwright.testing.extractor import CapitalizedExtractor
from ragwright.testing.graph_contract import GRAPH_CORPUS, load_graph
from ragwright.testing.store_contract import OTHER_SPACE, SPACE, BoundStore, make_document


class SpaceEmbedder:
    """An embedder in `SPACE` (or ``space``): a text's vector is a function of its hash, and
    every call is recorded."""

    def __init__(self, space: EmbeddingSpace = SPACE) -> None:
        self.space = space
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded += texts
        return np.array([self.vector(text) for text in texts], dtype=np.float32).reshape(
            len(texts), self.space.dimension
        )

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.vector(text)

    def vector(self, text: str) -> npt.NDArray[np.float32]:
        digest = hashlib.sha256(text.encode()).digest()
        row = np.frombuffer(digest, dtype=np.uint8)[: self.space.dimension].astype(np.float32)
        return (row + 1) / np.linalg.norm(row + 1)


def stated(source: str) -> list[StatedFact]:
    """The typed facts ``source`` of `GRAPH_CORPUS` states, chunk by chunk."""
    _, chunks = make_document(source, GRAPH_CORPUS[source])
    return [f for facts in CapitalizedExtractor().extract(chunks) for f in stated_facts(facts)]


def stored(store: Any) -> Counter[TypedFact]:
    return Counter(store.fact_vectors(SPACE).facts)


class FactVectorContract(BoundStore):
    """Inherit and provide the ``open_store`` fixture."""

    @pytest.fixture
    def embedded(self, store: Any) -> Any:
        load_graph(store)
        embed_fact_vectors(store, SpaceEmbedder)
        return store

    def test_each_chunk_stated_fact_gets_its_texts_vector(self, store: Any) -> None:
        load_graph(store)
        every = [fact for source in GRAPH_CORPUS for fact in stated(source)]
        assert store.chunks_without_fact_vectors(None, 100) == sorted(
            {fact.chunk_id for fact in every}
        )
        embedder = SpaceEmbedder()
        assert embed_fact_vectors(store, lambda: embedder) == len(every) > 0
        assert sorted(embedder.embedded) == sorted({fact.text for fact in every})
        assert store.chunks_without_fact_vectors(None, 100) == []
        found = store.fact_vectors(SPACE)
        assert Counter(found.facts) == Counter(fact.fact for fact in every)
        vector = {fact.fact: embedder.vector(fact.text) for fact in every}
        for fact, row in zip(found.facts, found.vectors, strict=True):
            np.testing.assert_allclose(row, vector[fact])
        assert embed_fact_vectors(store, SpaceEmbedder) == 0  # idempotent

    def test_a_documents_delete_takes_its_fact_vectors(self, embedded: Any) -> None:
        version = embedded.fact_vector_version()
        before = stored(embedded)
        paris = Counter(fact.fact for fact in stated("paris.md"))
        assert paris and embedded.delete(make_document("paris.md", ["x"])[0].id)
        assert stored(embedded) == before - paris
        assert embedded.fact_vector_version() != version

    def test_replaced_facts_lose_their_vectors(self, embedded: Any) -> None:
        before = stored(embedded)
        _, chunks = make_document("paris.md", GRAPH_CORPUS["paris.md"])
        embedded.write_facts(CapitalizedExtractor(version="2").extract(chunks))
        assert stored(embedded) == before - Counter(fact.fact for fact in stated("paris.md"))
        assert embedded.chunks_without_fact_vectors(None, 100) == [chunks[0].id]
        assert embed_fact_vectors(embedded, SpaceEmbedder) == len(stated("paris.md"))
        assert stored(embedded) == before

    def test_a_fact_its_chunk_does_not_state_is_not_stored(self, store: Any) -> None:
        load_graph(store)
        real = stated("paris.md")[0]
        made_up = StatedFact(real.chunk_id, TypedFact("a", "b", "c"), "a b c")
        assert store.write_fact_vectors(SPACE, [made_up], np.ones((1, 4), np.float32)) == 0
        assert store.fact_vectors(SPACE).facts == ()

    def test_another_space_is_refused_and_vectors_are_checked(self, store: Any) -> None:
        load_graph(store)
        facts = stated("paris.md")
        good = SpaceEmbedder().embed_documents([fact.text for fact in facts])
        with pytest.raises(EmbeddingSpaceMismatch):
            store.write_fact_vectors(OTHER_SPACE, facts, good)
        with pytest.raises(EmbeddingSpaceMismatch):
            store.fact_vectors(OTHER_SPACE)
        with pytest.raises(StoreError, match="shape"):
            store.write_fact_vectors(SPACE, facts, good[:, :3])
        with pytest.raises(StoreError, match="NaN"):
            store.write_fact_vectors(SPACE, facts, np.full_like(good, np.nan))
        assert store.fact_vectors(SPACE).facts == ()
        assert store.write_fact_vectors(SPACE, facts, good) == len(facts)
