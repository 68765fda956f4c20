"""Delete is a cascade, never an un-summarization: after any sequence of writes and deletes the
graph's tables (and the typed facts read from them) hold exactly what writing the surviving
documents alone would have made."""

from __future__ import annotations

import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright import Document, Index
from ragwright.pipeline.graph.fact_vectors import embed_fact_vectors
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.store import DATABASE_NAME
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor
from ragwright.testing.fact_vector_contract import SpaceEmbedder
from ragwright.testing.graph_contract import graph_write
from ragwright.testing.store_contract import SPACE, make_document

NAMES = ["Ada Lovelace", "Lovelace", "Charles Babbage", "IBM", "I.B.M.", "London", "Turing"]
FILLER = ["met", "wrote to", "visited", "and"]

sentence = st.lists(st.sampled_from(NAMES), min_size=0, max_size=4).map(
    lambda names: " ".join(f"{name} {FILLER[i % 4]}" for i, name in enumerate(names)) + " end."
)
document = st.lists(sentence, min_size=1, max_size=3)

#: Every graph table as content (store row ids replaced by chunk ids, surrogate keys left out).
TABLES = {
    "extractions": "SELECT c.id, g.extractor FROM graph_extractions g "
    "JOIN chunks c ON c.rowid = g.chunk_rowid",
    "mentions": "SELECT c.id, m.extractor, m.char_start, m.char_end, m.text, m.key, m.label "
    "FROM graph_mentions m JOIN chunks c ON c.rowid = m.chunk_rowid",
    "relations": "SELECT c.id, r.extractor, r.source, r.target, r.label, r.weight "
    "FROM graph_relations r JOIN chunks c ON c.rowid = r.chunk_rowid",
    "entities": "SELECT key, mentions, linked FROM graph_entities",
    "forms": "SELECT key, form, label, mentions FROM graph_entity_forms",
    "edges": "SELECT source, target, relations, weight FROM graph_edges",
    "synonyms": "SELECT source, target, score FROM graph_synonyms",
    "decisions": "SELECT source, target, decision FROM graph_decisions",
    "fact_vectors": "SELECT c.id, v.source, v.label, v.target, v.text, v.space, v.vector "
    "FROM graph_fact_vectors v JOIN chunks c ON c.rowid = v.chunk_rowid",
}


def tables(directory: Path) -> dict[str, Counter[tuple[object, ...]]]:
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        return {name: Counter(db.execute(sql).fetchall()) for name, sql in TABLES.items()}


def written(steps: list[tuple[str, list[str] | None]]) -> dict[str, Counter[tuple[object, ...]]]:
    """The tables after each step: write (source, texts), or delete source (texts None);
    synonyms linked and fact vectors filled after each, as ingest and graph build do."""
    with tempfile.TemporaryDirectory(prefix="graphprop") as name:
        directory = Path(name)
        store = SQLiteStore(directory)
        store.bind_space(SPACE)
        for source, texts in steps:
            if texts is None:
                store.delete(make_document(source, ["x"])[0].id)
            else:
                store.write([graph_write(source, texts)])
            embed_fact_vectors(store, SpaceEmbedder)
            store.link_synonyms()
        # The typed facts graph search links queries to, and their vectors, are
        # evidence-derived too.
        facts = Counter((f.source, f.predicate, f.target) for f in store.typed_facts())
        vectors = store.fact_vectors(SPACE)
        linked = Counter(
            (f.source, f.predicate, f.target, row.tobytes())
            for f, row in zip(vectors.facts, vectors.vectors, strict=True)
        )
        store.close()
        return {**tables(directory), "typed_facts": facts, "fact_vectors_read": linked}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=document, b=document)
def test_ingest_a_then_b_then_delete_b_equals_a_alone(a: list[str], b: list[str]) -> None:
    assert written([("a.md", a), ("b.md", b), ("b.md", None)]) == written([("a.md", a)])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=document, b=document, changed=document)
def test_replacing_a_equals_writing_the_new_a(
    a: list[str], b: list[str], changed: list[str]
) -> None:
    assert written([("a.md", a), ("b.md", b), ("a.md", changed)]) == written(
        [("b.md", b), ("a.md", changed)]
    )


def test_reingesting_unchanged_content_writes_nothing(tmp_path: Path) -> None:
    documents = [
        Document.from_text("a.md", "Ada Lovelace wrote to Charles Babbage."),
        Document.from_text("b.md", "IBM and I.B.M. in London."),
    ]
    extractor = CapitalizedExtractor()
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        first = kb.ingestion.documents(documents, extractor=extractor)
        version, calls = kb.graph.source.graph_version(), extractor.calls
        before = tables(tmp_path / "kb")
        again = kb.ingestion.documents(documents, extractor=extractor)
        assert (first.chunks_extracted, again.chunks_extracted) == (2, 0)
        assert kb.graph.source.graph_version() == version
        assert extractor.calls == calls  # nothing was extracted again
        assert kb.graph.build(extractor).chunks_extracted == 0
        assert kb.graph.source.graph_version() == version
    assert before["fact_vectors"]  # the ingest embedded its typed facts
    assert tables(tmp_path / "kb") == before
