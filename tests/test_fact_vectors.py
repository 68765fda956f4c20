"""Query-to-fact linking on a store's graph reads the fact vectors `graph build` stored: the
query is the only text embedded at search time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ragwright import Document, Index
from ragwright.graph.fact_linking import FactLinker, stated_facts
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts, Mention, Relation
from ragwright.pipeline.graph.fact_vectors import embed_fact_vectors
from ragwright.ports import DocumentWrite, Embedder
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

FACTS = [
    ("river.md", "Brennick", "lies on the river", "Sollen"),
    ("climb.md", "Orrin", "is climbed by", "Tessel"),
    ("born.md", "Quill", "was born in", "Brennick"),
]
QUERY = "which mountain is climbed each spring?"  # names no entity


class Counting:
    """The index's embedder, counting the documents it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.space, self.documents = inner, inner.space, 0

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.documents += len(texts)
        return np.asarray(self.inner.embed_documents(texts), dtype=np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return np.asarray(self.inner.embed_query(text), dtype=np.float32)


class FactExtractor:
    """Each chunk's one fact, "First predicate Second.", as `FACTS` states it."""

    id = "facts:1"

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        found = []
        for chunk in chunks:
            _, first, predicate, second = next(f for f in FACTS if chunk.text.startswith(f[1]))
            end = len(chunk.text) - 1
            mentions = (
                Mention(0, len(first), first, first.lower(), "NAME"),
                Mention(end - len(second), end, second, second.lower(), "NAME"),
            )
            relation = Relation(first.lower(), second.lower(), predicate, 1.0)
            found.append(ChunkFacts(chunk.id, self.id, mentions, (relation,)))
        return found


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    embedder = HashingEmbedder()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    for source, first, predicate, second in FACTS:
        document, chunks = make_document(source, [f"{first} {predicate} {second}."])
        vectors = np.asarray(embedder.embed_documents([c.text for c in chunks]), np.float32)
        facts = FactExtractor().extract(chunks)
        store.write([DocumentWrite(document, chunks, vectors, facts=facts)])
    yield store
    store.close()


def test_a_fact_is_embedded_as_its_chunk_states_it() -> None:
    _, chunks = make_document("born.md", ["Quill was born in Brennick."])
    [fact] = stated_facts(FactExtractor().extract(chunks)[0])
    assert (fact.fact.source, fact.fact.predicate, fact.fact.target) == (
        "brennick", "was born in", "quill"
    )  # fmt: skip
    # Stored with its endpoints in key order, embedded as the chunk states it.
    assert fact.text == "Quill was born in Brennick"


def test_linking_reads_the_stored_vectors_and_embeds_only_the_query(store: SQLiteStore) -> None:
    embedder = Counting(HashingEmbedder())
    linker = FactLinker.for_graph(store, lambda: embedder)
    assert linker is not None and linker.stored is store
    search, snapshot = GraphSearch(None, linker), store.graph_snapshot()
    settings = GraphSettings(fact_weight=1.0, fact_top=1)
    assert search.rank(QUERY, [], snapshot, settings, 10) == []  # no vector stored yet
    assert embed_fact_vectors(store, lambda: embedder) == 3
    assert embedder.documents == 3
    linked = search.rank(QUERY, [], snapshot, settings, 10)
    climb = make_document("climb.md", ["x"])[0].id
    assert linked and store.get_chunks([linked[0][0]])[linked[0][0]].document_id == climb
    assert embedder.documents == 3  # linking embedded no fact
    assert store.delete(climb)
    after = search.rank(QUERY, [], store.graph_snapshot(), settings, 10)
    assert linked[0][0] not in {chunk for chunk, _ in after}


def test_ingest_and_build_store_the_fact_vectors(tmp_path: Path) -> None:
    documents = [
        Document.from_text(source, f"{first} {predicate} {second}.")
        for source, first, predicate, second in FACTS
    ]
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingestion.documents(documents, extractor=FactExtractor())
        stored = kb.graph.source.fact_vectors(HashingEmbedder().space)  # type: ignore[attr-defined]
        assert {f.predicate for f in stored.facts} == {f[2] for f in FACTS}
        assert kb.graph.build(FactExtractor()).fact_vectors == 0  # nothing left to embed
