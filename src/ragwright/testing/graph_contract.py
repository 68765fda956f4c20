"""The graph conformance suite: every store that keeps the entity graph passes it.

A store's test module subclasses `GraphContract` and provides ``open_store`` exactly as for
`ragwright.testing.store_contract.StoreContract`. The store must implement the graph ports
(`FactTarget`, `GraphReader`, `EntityResolver`, `GraphSource`) beside `Store`. Facts come
from `CapitalizedExtractor`, so every entity, edge and span below is known exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragwright.errors import ConfigError, ExtractionError, UnknownEntity
from ragwright.graph.snapshot import typed_facts
from ragwright.models import Chunk, Document
from ragwright.models.graph import ChunkFacts, Mention, Relation, TypedFact
from ragwright.models.graph_records import EDGE_WEIGHT_CAP
from ragwright.ports import DocumentWrite
from ragwright.testing.extractor import CapitalizedExtractor
from ragwright.testing.store_contract import BoundStore, make_document, vectors_for

EXTRACTOR = CapitalizedExtractor()

GRAPH_CORPUS: dict[str, list[str]] = {
    "obama.md": ["Barack Obama met Angela Merkel in Berlin.", "Obama flew home from Berlin."],
    "ibm.md": ["IBM opened a lab in Zurich.", "The I.B.M. lab in Zurich grew."],
    "paris.md": ["Angela Merkel visited Paris."],
}


def graph_write(source: str, texts: list[str], extractor: Any = EXTRACTOR) -> DocumentWrite:
    """A document write carrying its chunks' facts."""
    document, chunks = make_document(source, texts)
    facts = extractor.extract(chunks) if extractor is not None else []
    return DocumentWrite(document, chunks, vectors_for(source, len(chunks)), facts=facts)


def load_graph(store: Any, corpus: dict[str, list[str]] | None = None) -> None:
    store.write([graph_write(source, texts) for source, texts in (corpus or GRAPH_CORPUS).items()])


def _document(source: str) -> Document:
    return make_document(source, GRAPH_CORPUS[source])[0]


def _edge(snapshot: Any, first: str, second: str) -> float:
    keys = list(snapshot.entity_keys)
    a, b = sorted((keys.index(first), keys.index(second)))
    for s, t, w in zip(
        snapshot.edge_source, snapshot.edge_target, snapshot.edge_weight, strict=True
    ):
        if (s, t) == (a, b):
            return float(w)
    return 0.0


class GraphContract(BoundStore):
    """Inherit and provide the ``open_store`` fixture."""

    @pytest.fixture
    def graph(self, store: Any) -> Any:
        load_graph(store)
        return store

    # -- writing with chunks ----------------------------------------------------------------

    def test_facts_are_written_with_their_chunks(self, graph: Any) -> None:
        stats = graph.graph_stats()
        assert stats.extracted == {EXTRACTOR.id: 5}
        assert stats.chunks_total == 5
        snapshot = graph.graph_snapshot()
        assert set(snapshot.entity_keys) == {
            "barack obama", "angela merkel", "berlin", "obama", "ibm", "zurich", "i.b.m",
            "paris",
        }  # fmt: skip
        assert stats.entities == snapshot.entity_count == 8
        assert stats.mentions == 11
        assert snapshot.chunk_count == 5
        assert float(snapshot.mention_count.sum()) == 11.0

    def test_an_entity_has_its_aliases_neighbours_and_exact_spans(self, graph: Any) -> None:
        info = graph.describe_entity("Berlin")
        assert info is not None and info.key == "berlin" and info.mentions == 2
        assert info.aliases == (("Berlin", 2),)
        assert {n.key for n in info.neighbours} == {"barack obama", "angela merkel", "obama"}
        content = _document("obama.md").content
        for site in info.sites:
            assert content[site.document_start : site.document_end] == "Berlin"
            chunk = graph.get_chunks([site.chunk_id])[site.chunk_id]
            assert chunk.text[site.start : site.end] == "Berlin"
        assert [s.chunk_index for s in info.sites] == [0, 1]
        assert graph.describe_entity("  the BERLIN's ") is not None  # by its normalized key
        assert graph.describe_entity("Atlantis") is None

    def test_delete_takes_out_exactly_that_documents_facts(self, graph: Any) -> None:
        before = graph.graph_snapshot()
        merkel_berlin = _edge(before, "angela merkel", "berlin")
        assert graph.delete(_document("paris.md").id)
        after = graph.graph_snapshot()
        assert after.version != before.version
        assert "paris" not in after.entity_keys  # orphaned: gone
        assert "angela merkel" in after.entity_keys  # still named in obama.md
        assert graph.describe_entity("Angela Merkel").mentions == 1
        assert _edge(after, "angela merkel", "berlin") == merkel_berlin
        assert graph.graph_stats().extracted == {EXTRACTOR.id: 4}

    def test_typed_facts_and_stored_facts_follow_their_evidence(self, graph: Any) -> None:
        corpus = {s: make_document(s, texts) for s, texts in GRAPH_CORPUS.items()}
        written = {s: EXTRACTOR.extract(chunks) for s, (_, chunks) in corpus.items()}
        everything = {f for facts in written.values() for f in typed_facts(facts)}
        assert set(graph.typed_facts()) == everything
        paris_chunks = [c.id for c in corpus["paris.md"][1]]
        assert graph.stored_facts(paris_chunks) == written["paris.md"]
        assert graph.delete(corpus["paris.md"][0].id)
        kept = {f for s in ("obama.md", "ibm.md") for f in typed_facts(written[s])}
        assert set(graph.typed_facts()) == kept != everything
        assert graph.stored_facts(paris_chunks) == []

    def test_a_typed_fact_keeps_its_direction(self, store: Any) -> None:
        """The subject is read back first though it sorts after the object ("wood" after
        "poughkeepsie"), while the undirected edge between them is the same either way."""
        document, chunks = make_document("wood.md", ["Wood was born in Poughkeepsie."])
        text = chunks[0].text
        mentions = tuple(
            Mention(text.index(name), text.index(name) + len(name), name, name.lower(), "X")
            for name in ("Wood", "Poughkeepsie")
        )
        born = Relation("wood", "poughkeepsie", "born in", 1.0)
        facts = ChunkFacts(chunks[0].id, "direction-test:1", mentions, (born,))
        store.write([DocumentWrite(document, chunks, vectors_for("wood.md", 1), facts=[facts])])
        assert store.typed_facts() == [TypedFact("wood", "born in", "poughkeepsie")]
        assert store.stored_facts([chunks[0].id]) == [facts]
        assert _edge(store.graph_snapshot(), "poughkeepsie", "wood") == 1.0

    def test_edge_weights_drop_when_their_evidence_goes(self, store: Any) -> None:
        load_graph(store, {"one.md": ["Ada Lovelace and Charles Babbage."],
                           "two.md": ["Ada Lovelace wrote to Charles Babbage."]})  # fmt: skip
        both = _edge(store.graph_snapshot(), "ada lovelace", "charles babbage")
        store.delete(make_document("two.md", ["x"])[0].id)
        one = _edge(store.graph_snapshot(), "ada lovelace", "charles babbage")
        assert both == pytest.approx(2.0) and one == pytest.approx(1.0)

    def test_edge_weights_are_capped(self, store: Any) -> None:
        texts = [f"Ada Lovelace met Charles Babbage, day {i}." for i in range(12)]
        load_graph(store, {"many.md": texts})
        weight = _edge(store.graph_snapshot(), "ada lovelace", "charles babbage")
        assert weight == pytest.approx(EDGE_WEIGHT_CAP)
        info = store.describe_entity("Ada Lovelace")
        assert info.neighbours[0].weight == pytest.approx(EDGE_WEIGHT_CAP)

    def test_replace_swaps_the_documents_facts(self, graph: Any) -> None:
        graph.write([graph_write("paris.md", ["Emmanuel Macron visited Lyon."])])
        keys = set(graph.graph_snapshot().entity_keys)
        assert {"emmanuel macron", "lyon"} <= keys and "paris" not in keys
        assert graph.describe_entity("Angela Merkel").mentions == 1

    def test_a_write_without_facts_leaves_its_chunks_unextracted(self, graph: Any) -> None:
        graph.write([graph_write("paris.md", ["Angela Merkel visited Rome."], extractor=None)])
        assert "rome" not in graph.graph_snapshot().entity_keys
        pending = graph.chunks_without_facts(EXTRACTOR.id, None, 10)
        assert [c.text for c in pending] == ["Angela Merkel visited Rome."]

    def test_a_write_that_changes_no_fact_keeps_the_version(self, graph: Any) -> None:
        version = graph.graph_version()
        document, chunks = make_document("plain.md", ["no names here at all"])
        graph.upsert(document, chunks, vectors_for("plain.md", 1))
        graph.graph_stats(), graph.graph_snapshot()
        assert graph.graph_version() == version

    def test_the_snapshot_is_cached_by_version(self, graph: Any) -> None:
        first = graph.graph_snapshot()
        assert graph.graph_snapshot() is first
        graph.delete(_document("ibm.md").id)
        assert graph.graph_snapshot() is not first

    def test_a_moved_document_keeps_its_facts_under_its_new_chunk_ids(self, graph: Any) -> None:
        before = graph.graph_snapshot()
        texts = GRAPH_CORPUS["obama.md"]
        moved, chunks = make_document("renamed.md", texts)
        assert graph.move_document(_document("obama.md").id, moved, chunks)
        after = graph.graph_snapshot()
        assert after.version != before.version  # a cached walk would name the old chunk ids
        new_ids = {c.id for c in chunks}
        assert new_ids <= set(after.chunk_ids)
        assert set(after.entity_keys) == set(before.entity_keys)
        assert float(after.mention_count.sum()) == float(before.mention_count.sum())
        info = graph.describe_entity("Berlin")
        assert {s.chunk_id for s in info.sites} <= new_ids
        assert {(s.source, s.document_id) for s in info.sites} == {("renamed.md", moved.id)}
        assert graph.graph_stats().extracted == {EXTRACTOR.id: 5}
        # the facts now belong to the moved document: its delete takes them out
        version = graph.graph_version()
        assert graph.delete(moved.id)
        assert graph.graph_version() != version
        assert "berlin" not in graph.graph_snapshot().entity_keys
        assert graph.graph_stats().extracted == {EXTRACTOR.id: 3}

    # -- facts for stored chunks (graph build) ----------------------------------------------

    def test_facts_for_stored_chunks_and_paging(self, store: Any) -> None:
        store.write([graph_write(s, t, extractor=None) for s, t in GRAPH_CORPUS.items()])
        first = store.chunks_without_facts(EXTRACTOR.id, None, 3)
        rest = store.chunks_without_facts(EXTRACTOR.id, first[-1].id, 10)
        assert len(first) == 3 and len(rest) == 2
        assert [c.id for c in first + rest] == sorted(c.id for c in first + rest)
        written = store.write_facts(EXTRACTOR.extract(first + rest))
        assert (written.chunks, written.mentions, written.skipped) == (5, 11, 0)
        assert store.chunks_without_facts(EXTRACTOR.id, None, 10) == []
        # another extractor (or version) has not extracted them: its facts would replace these
        assert len(store.chunks_without_facts("capitalized:2", None, 10)) == 5

    def test_facts_replace_another_extractors(self, graph: Any) -> None:
        newer = CapitalizedExtractor("2")
        chunks = graph.chunks_without_facts(newer.id, None, 10)
        graph.write_facts(newer.extract(chunks))
        stats = graph.graph_stats()
        assert stats.extracted == {newer.id: 5} and stats.mentions == 11
        info = graph.describe_entity("Berlin")
        assert {s.extractor for s in info.sites} == {newer.id}

    def test_facts_for_a_deleted_chunk_are_skipped(self, store: Any) -> None:
        store.write([graph_write("obama.md", GRAPH_CORPUS["obama.md"], extractor=None)])
        chunks = store.chunks_without_facts(EXTRACTOR.id, None, 10)
        facts = EXTRACTOR.extract(chunks)
        store.delete(_document("obama.md").id)
        written = store.write_facts(facts)
        assert (written.chunks, written.skipped) == (0, 2)
        assert store.graph_stats().mentions == 0 and store.get_chunks([chunks[0].id]) == {}

    def test_unresolved_relations_are_counted_not_stored(self, store: Any) -> None:
        store.write([graph_write("x.md", ["Ada Lovelace"], extractor=None)])
        chunk = store.chunks_without_facts(EXTRACTOR.id, None, 1)[0]
        facts = ChunkFacts(
            chunk.id,
            EXTRACTOR.id,
            (Mention(0, 12, "Ada Lovelace", "ada lovelace", "PERSON"),),
            (Relation("ada lovelace", "charles babbage", "knows", 0.5),),
        )
        written = store.write_facts([facts])
        assert (written.mentions, written.relations, written.unresolved) == (1, 0, 1)
        assert store.graph_stats().edges == 0

    def test_a_mention_that_is_not_its_span_is_refused(self, store: Any) -> None:
        store.write([graph_write("x.md", ["Ada Lovelace"], extractor=None)])
        chunk: Chunk = store.chunks_without_facts(EXTRACTOR.id, None, 1)[0]
        bad = ChunkFacts(chunk.id, EXTRACTOR.id, (Mention(0, 3, "Eve", "eve", "PERSON"),), ())
        with pytest.raises(ExtractionError):
            store.write_facts([bad])
        document, chunks = make_document("y.md", ["Grace Hopper"])
        stray = ChunkFacts("not-in-this-write", EXTRACTOR.id, (), ())
        with pytest.raises(ExtractionError):
            store.write([DocumentWrite(document, chunks, vectors_for("y.md", 1), facts=[stray])])
        assert store.graph_stats().mentions == 0 and store.find_document("y.md") is None

    # -- resolution ---------------------------------------------------------------------------

    def test_synonym_links_and_their_undoing(self, graph: Any) -> None:
        assert graph.link_synonyms() == 2  # ibm ~ i.b.m, obama ~ barack obama
        assert graph.link_synonyms() == 0  # computed once per entity
        snapshot = graph.graph_snapshot()
        keys = snapshot.entity_keys
        linked = {
            (keys[s], keys[t])
            for s, t in zip(snapshot.synonym_source, snapshot.synonym_target, strict=True)
        }
        assert linked == {("i.b.m", "ibm"), ("barack obama", "obama")}
        assert np.all(snapshot.synonym_source < snapshot.synonym_target)
        info = graph.describe_entity("IBM")
        assert [(s.key, s.weight) for s in info.synonyms] == [("i.b.m", 1.0)]
        assert graph.unmerge_entities("IBM", "I.B.M.") is True
        assert graph.describe_entity("IBM").synonyms == ()
        # an entity that comes back is linked again, but never to one a user separated
        graph.delete(_document("ibm.md").id)
        load_graph(graph, {"ibm.md": GRAPH_CORPUS["ibm.md"]})
        graph.link_synonyms()
        assert graph.describe_entity("IBM").synonyms == ()

    def test_a_last_name_links_only_where_written_with_the_full_name(self, store: Any) -> None:
        load_graph(store, {"a.md": ["Joel Cohen directed films."], "b.md": ["Cohen sang."]})
        assert store.link_synonyms() == 0  # "Cohen" only ever written apart: someone else?
        load_graph(store, {"c.md": ["Leonard Maltin wrote books.", "Maltin laughed."]})
        assert store.link_synonyms() == 1
        assert [s.key for s in store.describe_entity("Maltin").synonyms] == ["leonard maltin"]

    def test_links_go_with_their_entities(self, graph: Any) -> None:
        graph.link_synonyms()
        graph.delete(_document("ibm.md").id)
        assert graph.graph_stats().synonym_links == 1

    def test_merge_and_unmerge(self, graph: Any) -> None:
        version = graph.graph_version()
        graph.merge_entities("Obama", "Barack Obama")
        assert graph.graph_version() != version
        snapshot = graph.graph_snapshot()
        assert "obama" not in snapshot.entity_keys and "barack obama" in snapshot.entity_keys
        assert snapshot.entity_count == 7
        assert np.all(snapshot.edge_source < snapshot.edge_target)
        barack = list(snapshot.entity_keys).index("barack obama")
        assert float(snapshot.mention_count[snapshot.mention_entity == barack].sum()) == 2.0
        assert graph.graph_stats().merges == 1
        info = graph.describe_entity("Obama")
        assert [m.key for m in info.merged] == ["barack obama"]
        assert graph.unmerge_entities("Barack Obama", "Obama") is True
        assert graph.graph_snapshot().entity_count == 8
        assert graph.graph_stats().merges == 0
        assert graph.unmerge_entities("Barack Obama", "Obama") is False

    def test_merging_what_is_not_there_is_refused(self, graph: Any) -> None:
        with pytest.raises(UnknownEntity):
            graph.merge_entities("Obama", "Atlantis")
        with pytest.raises(ConfigError):
            graph.merge_entities("Obama", "obama's")
