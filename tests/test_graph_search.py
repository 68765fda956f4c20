"""Graph search: a bridging chunk that plain search misses is found through the entities of
the top hit, fused with hybrid by rank; the settings, the typed errors without a graph, and a
filter that the graph cannot widen."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragwright import GraphNotBuilt, Index
from ragwright.errors import ConfigError, MissingDependencyError, UnsupportedScale
from ragwright.graph.bridges import bridge_positions, names_both, title_key
from ragwright.graph.extractors.rules import RuleExtractor
from ragwright.graph.fact_linking import FactLinker
from ragwright.graph.named_hits import named_positions
from ragwright.graph.ppr import build_walk_graph, personalized_pagerank
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.graph.snapshot import MemoryGraph, build_snapshot
from ragwright.models import Arm, BM25Parameters, Chunk, Document, Hit, Scale
from ragwright.models.graph import ChunkFacts, Mention, Relation
from ragwright.pipeline.search.fusion import fuse_ranked_lists
from ragwright.pipeline.search.graph_retrieval import (
    bounded_newcomers,
    confident_top,
    promoted,
)
from ragwright.pipeline.search.request import SearchOptions, SearchRequest
from ragwright.testing import HashingEmbedder

QUERY = "Which waterway passes the hometown of Ada Quill?"
FIRST_HOP = "Ada Quill was born in Brennick, where she wrote her first novel."
# The second hop is the page about Brennick: titled with its name (`ragwright.graph.bridges`).
BRIDGE = "Brennick\n\nBrennick lies on the Sollen, known for its stone bridges and its mills."
DISTRACTORS = [
    f"the waterway festival passes the hometown of many painters, year {i}." for i in range(8)
]
UNRELATED = "Mount Orrin is climbed each spring by the Tessel club."


def documents() -> list[Document]:
    texts = {"first.txt": FIRST_HOP, "bridge.txt": BRIDGE, "unrelated.txt": UNRELATED}
    texts |= {f"distractor-{i}.txt": text for i, text in enumerate(DISTRACTORS)}
    return [Document.from_text(source, text) for source, text in texts.items()]


def stored_chunks(index: Index) -> list[Chunk]:
    chunks, after = [], None
    while page := index.documents.export.chunk_page(after, 100):
        chunks += page
        after = page[-1].id
    return chunks


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    location = tmp_path_factory.mktemp("graph") / "kb"
    with Index(location, embedder=HashingEmbedder()) as index:
        assert index.ingestion.documents(documents()).ok
    return location


@pytest.fixture(scope="module")
def facts(folder: Path) -> list[ChunkFacts]:
    with Index(folder, embedder=HashingEmbedder()) as index:
        return RuleExtractor().extract(stored_chunks(index))


@pytest.fixture
def kb(folder: Path, facts: list[ChunkFacts]) -> Iterator[Index]:
    with Index(folder, embedder=HashingEmbedder(), graph=MemoryGraph(facts)) as index:
        yield index


def sources(hits: list[Hit]) -> list[str]:
    return [hit.source for hit in hits]


def test_the_walk_reaches_the_bridge_only_through_the_first_hops_entities(
    facts: list[ChunkFacts],
) -> None:
    snapshot = build_snapshot(facts)
    text_of = {chunk_id: chunk_id for chunk_id in snapshot.chunk_ids}
    first = next(f.chunk_id for f in facts if any(m.key == "ada quill" for m in f.mentions))
    bridge = next(f.chunk_id for f in facts if any(m.key == "sollen" for m in f.mentions))
    unrelated = next(f.chunk_id for f in facts if any(m.key == "mount orrin" for m in f.mentions))
    ranked = GraphSearch().rank(QUERY, [first], snapshot, GraphSettings(), depth=10)
    order = [chunk_id for chunk_id, _ in ranked]
    assert order[:2] == [first, bridge] and unrelated not in order
    assert set(order) <= set(text_of)
    # With nothing to start from (no named entity, no hit), the walk ranks nothing.
    assert GraphSearch().rank("what is it?", [], snapshot, GraphSettings(), depth=10) == []


def test_pagerank_conserves_mass_and_restarts_at_the_seeds(facts: list[ChunkFacts]) -> None:
    snapshot = build_snapshot(facts)
    graph = build_walk_graph(snapshot, relation_weight=1.0, synonym_weight=1.0)
    seeds = np.zeros(graph.entities + graph.chunks, dtype=np.float32)
    seeds[snapshot.entity_keys.index("ada quill")] = 1.0
    scores = personalized_pagerank(graph, seeds, damping=0.5)
    assert scores.sum() == pytest.approx(1.0, abs=1e-4)
    assert int(np.argmax(scores)) == snapshot.entity_keys.index("ada quill")
    assert not personalized_pagerank(graph, seeds * 0, damping=0.5).any()


# The rankings three deep were laid out for min-max fusion: z-scores over three candidates let
# a distractor found by the vector arm alone lead, so these tests name the fusion they test.
MIN_MAX: SearchOptions = {"fusion": "convex", "document_share": 0.0}


def test_graph_mode_finds_the_bridge_that_hybrid_misses(kb: Index) -> None:
    hybrid = kb.search(QUERY, top_k=3)
    assert sources(hybrid)[0] == "first.txt" and "bridge.txt" not in sources(hybrid)
    # Each ranking three deep, so the bridge can come from nowhere but the graph.
    graph = kb.search(QUERY, top_k=3, mode="graph", arm_depth=3, **MIN_MAX)
    assert sources(graph)[0] == "first.txt" and "bridge.txt" in sources(graph)
    first, bridge = graph[0], graph[sources(graph).index("bridge.txt")]
    assert Arm.GRAPH in first.arms and first.arms & {Arm.BM25, Arm.VECTOR}
    assert bridge.arms == {Arm.GRAPH}
    assert all(hit.scale is Scale.FUSED for hit in graph)
    assert [hit.rank for hit in graph] == [1, 2, 3]
    assert bridge.chunk.text == BRIDGE  # the provenance chunk, read from the store


def test_graph_mode_lifts_the_bridge_hybrid_ranks_low_to_second(kb: Index) -> None:
    """Hybrid ranks the bridge behind eight distractors; the walk, restarting at hybrid's
    hits by their scores and at the first hit's entities, puts it second."""
    hybrid = sources(kb.search(QUERY, top_k=12, **MIN_MAX))
    assert hybrid[0] == "first.txt" and hybrid.index("bridge.txt") > 5
    graph = kb.search(QUERY, top_k=3, mode="graph", **MIN_MAX)
    assert sources(graph)[:2] == ["first.txt", "bridge.txt"]
    assert graph[1].arm_ranks[Arm.GRAPH] == 2


def test_hybrids_first_hits_keep_their_places_and_the_graph_fills_after_them(kb: Index) -> None:
    hybrid = kb.search(QUERY, top_k=3, arm_depth=3, **MIN_MAX)
    graph = kb.search(
        QUERY, top_k=4, mode="graph", arm_depth=3, graph=GraphSettings(keep_top=3), **MIN_MAX
    )
    assert [h.chunk.id for h in graph[:3]] == [h.chunk.id for h in hybrid]
    assert sources(graph)[3] == "bridge.txt" and graph[3].arms == {Arm.GRAPH}
    assert Arm.GRAPH in graph[0].arms  # a kept hit still says the graph found it too
    assert [hit.rank for hit in graph] == [1, 2, 3, 4]


def test_only_the_first_hits_hybrid_is_sure_of_keep_their_places(kb: Index) -> None:
    """With ``keep_gap``, hybrid's n-th hit keeps its place when its min-max normalized
    score stands that far above the next one's: a comparison's two clear hits stay first,
    a lone first hit with close followers leaves the order to the walk."""
    two_clear = [9.0, 8.8, 3.0, 2.5, 1.0]  # normalized 1, 0.975, 0.25, 0.19, 0
    one_clear = [9.0, 5.0, 4.8, 4.6, 1.0]  # 1, 0.5, 0.475, 0.45, 0
    none_clear = [9.0, 8.9, 8.8, 8.7, 1.0]
    assert confident_top(two_clear, 2, 0.15) == 2
    assert confident_top(one_clear, 2, 0.15) == 1
    assert confident_top(none_clear, 2, 0.15) == 0
    assert confident_top(two_clear, 1, 0.15) == 0  # never more than keep_top: 1 is not clear of 2
    assert confident_top(none_clear, 2, 0.0) == 2  # 0: keep_top, as without the gap
    assert confident_top([4.0, 4.0], 2, 0.5) == 2  # the last hit's next counts as 0
    assert confident_top([], 2, 0.15) == 0 and confident_top(two_clear, 0, 0.15) == 0
    # Through Index.search: a gap no hit clears keeps none, as keep_top 0 does.
    options: SearchOptions = {"top_k": 4, "mode": "graph", "arm_depth": 3, **MIN_MAX}
    kept = kb.search(QUERY, graph=GraphSettings(keep_top=3), **options)
    unsure = kb.search(QUERY, graph=GraphSettings(keep_top=3, keep_gap=1.0), **options)
    walk = kb.search(QUERY, graph=GraphSettings(keep_top=0), **options)
    assert [h.chunk.id for h in unsure] == [h.chunk.id for h in walk]
    assert [h.chunk.id for h in kept] != [h.chunk.id for h in walk]
    request = SearchRequest.from_mapping({"mode": "graph", "graph_keep_gap": 0.2})
    assert request.graph.keep_gap == 0.2 and request.settings()["graph_keep_gap"] == 0.2
    with pytest.raises(ConfigError, match="graph_keep_gap"):
        SearchRequest.from_mapping({"graph_keep_gap": 1.5})


def test_the_passages_a_comparison_names_keep_their_places_ahead_of_the_walk(kb: Index) -> None:
    """The query names Ada Quill, Brennick and Mount Orrin; hybrid ranks the passage naming
    the first two, then the one naming Mount Orrin. The walk, spreading from the first hit's
    entities, puts its neighbour (the bridge) above the second; ``keep_named`` keeps both
    named passages first, in hybrid's order, and the walk orders the rest."""
    query = (
        "Was Ada Quill, born in Brennick where she wrote her first novel, older than Mount Orrin?"
    )
    options: SearchOptions = {"top_k": 3, **MIN_MAX}
    hybrid = sources(kb.search(query, **options))
    assert hybrid[:3] == ["first.txt", "unrelated.txt", "bridge.txt"]
    # The query names Brennick: nothing to bridge, so the gate would keep hybrid's order
    # anyway; without it, the walk's order and keep_named are seen.
    off = GraphSettings(keep_named=0, bridge_hits=0)
    walk = sources(kb.search(query, mode="graph", graph=off, **options))
    assert walk[:2] == ["first.txt", "bridge.txt"]
    ungated = GraphSettings(bridge_hits=0, keep_named=2)
    named = kb.search(query, mode="graph", graph=ungated, **options)
    assert sources(named) == ["first.txt", "unrelated.txt", "bridge.txt"]
    assert Arm.GRAPH in named[1].arms and [hit.rank for hit in named] == [1, 2, 3]
    # A bridge question names one entity: only its first hop, already first, is kept.
    bridge = kb.search(QUERY, mode="graph", graph=ungated, **options)
    assert sources(bridge) == sources(kb.search(QUERY, mode="graph", graph=off, **options))
    # The rule: a hit naming two of the named entities, and the first hit naming each.
    assert named_positions({1, 2}, [{1, 2}, {1}, {2}]) == [0]
    assert named_positions({1, 2}, [{1, 5}, {5}, {2}, {2}]) == [0, 2]
    assert named_positions({1}, [{5}, {1}, {1}]) == []  # one name: nothing to keep
    assert named_positions({1, 2, 3}, [{3}, {1, 2}, {7}]) == [0, 1]
    request = SearchRequest.from_mapping({"mode": "graph", "graph_keep_named": 3})
    assert request.graph.keep_named == 3 and request.settings()["graph_keep_named"] == 3
    with pytest.raises(ConfigError, match="graph_keep_named"):
        SearchRequest.from_mapping({"graph_keep_named": -1})


def test_the_walk_reorders_hybrid_only_when_a_first_hit_bridges_to_a_titled_passage(
    kb: Index,
) -> None:
    """The gate: the first hop mentions Brennick, which the query does not name, and a
    passage is titled Brennick; graph mode then reorders, moving that passage up to rank 2.
    A query whose first hit leads nowhere (Tessel names no page) gets hybrid's order."""
    options: SearchOptions = {"top_k": 3, "arm_depth": 3, **MIN_MAX}
    bridged = kb.search(QUERY, mode="graph", **options)
    assert sources(bridged)[:2] == ["first.txt", "bridge.txt"]
    assert [hit.rank for hit in bridged] == [1, 2, 3]
    single = "Which club climbs Mount Orrin each spring?"
    hybrid = kb.search(single, **options)
    gated = kb.search(single, mode="graph", **options)
    assert sources(hybrid)[0] == "unrelated.txt"
    assert [h.chunk.id for h in gated] == [h.chunk.id for h in hybrid]
    assert not any(Arm.GRAPH in hit.arms for hit in gated)
    ungated = kb.search(single, mode="graph", graph=GraphSettings(bridge_hits=0), **options)
    assert any(Arm.GRAPH in hit.arms for hit in ungated)
    # The rule's parts: a title is a short first line less its qualifier; promotion only up.
    assert title_key("Kiss and Tell (1945 film)\n\nA comedy.") == "kiss and tell"
    assert title_key("Microstructural development of human newborn white matter\n\nx") == ""
    titles = ["brennick", "brennick", "sollen"]
    assert bridge_positions({"brennick"}, titles, [False, True, True]) == [1]
    assert bridge_positions({"brennick"}, ["brennick", "", "brennick"], [True, True, True]) == [
        0,
        2,
    ]
    hits = list(hybrid)
    assert [h.chunk.id for h in promoted(hits, hits[2].chunk.id, 2)] == [
        hits[0].chunk.id,
        hits[2].chunk.id,
        hits[1].chunk.id,
    ]
    assert promoted(hits, hits[0].chunk.id, 2) == hits
    # Two first hits about two entities the query names: a comparison, nothing to bridge.
    compared = "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert names_both(["scott derrickson", "ed wood"], compared)
    assert not names_both(["scott derrickson", "sinister"], compared)
    assert not names_both(["ed wood", "ed wood"], compared)
    assert not names_both(["scott derrickson", "ed"], "Did Scott Derrickson edit it?")
    request = SearchRequest.from_mapping(
        {"mode": "graph", "graph_bridge_hits": 2, "graph_bridge_rank": 0}
    )
    assert (request.graph.bridge_hits, request.graph.bridge_rank) == (2, 0)
    assert request.settings()["graph_bridge_hits"] == 2
    with pytest.raises(ConfigError, match="graph_bridge_rank"):
        SearchRequest.from_mapping({"graph_bridge_rank": -1})


def test_the_graph_brings_at_most_graph_max_new_chunks_hybrid_did_not_rank(kb: Index) -> None:
    ranked = [("first", 0.5), ("a", 0.3), ("second", 0.2), ("b", 0.1), ("c", 0.05)]
    known = ["first", "second"]
    assert bounded_newcomers(ranked, known, 1) == [("first", 0.5), ("a", 0.3), ("second", 0.2)]
    assert bounded_newcomers(ranked, known, 0) == [("first", 0.5), ("second", 0.2)]
    assert bounded_newcomers(ranked, known, 1000) == ranked
    # Through Index.search: with none allowed, the bridge hybrid missed stays out.
    options: SearchOptions = {"top_k": 3, "mode": "graph", "arm_depth": 3, **MIN_MAX}
    assert "bridge.txt" in sources(kb.search(QUERY, graph=GraphSettings(keep_top=1), **options))
    # (ungated: with the bridge passage left out, the gate would keep hybrid's order)
    none = kb.search(QUERY, graph=GraphSettings(keep_top=1, max_new=0, bridge_hits=0), **options)
    hybrid = kb.search(QUERY, top_k=3, arm_depth=3, **MIN_MAX)
    assert {h.chunk.id for h in none} == {h.chunk.id for h in hybrid}
    assert any(Arm.GRAPH in h.arms for h in none)  # the walk still reorders what hybrid found
    # No hybrid hit known and none new allowed: the graph ranking is empty, hybrid's is left.
    bare = kb.search(QUERY, graph=GraphSettings(keep_top=1, max_new=0, known_depth=0), **options)
    assert [h.chunk.id for h in bare] == [h.chunk.id for h in hybrid]
    assert not any(Arm.GRAPH in h.arms for h in bare)


def test_a_filter_is_never_widened_by_the_graph(kb: Index) -> None:
    hits = kb.search(QUERY, top_k=5, mode="graph", where='source != "bridge.txt"')
    assert hits and "bridge.txt" not in sources(hits)


def test_fusion_by_rank_lifts_what_both_rankings_found(kb: Index) -> None:
    def hit(chunk_id: str, arms: set[Arm], rank: int) -> Hit:
        chunk = Chunk(chunk_id, "doc", 0, "x", 0, 1)
        return Hit(chunk, 0.9, Scale.FUSED, frozenset(arms), f"{chunk_id}.md",
                   arm_ranks={arm: rank for arm in arms})  # fmt: skip

    hybrid = [hit("a", {Arm.BM25, Arm.VECTOR}, 1), hit("b", {Arm.BM25}, 2)]
    graph = [hit("b", {Arm.GRAPH}, 1), hit("c", {Arm.GRAPH}, 2)]
    fused = fuse_ranked_lists([(hybrid, 1.0), (graph, 1.0)], k=60)
    assert [h.chunk.id for h in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].arms == {Arm.BM25, Arm.GRAPH}
    assert dict(fused[0].arm_ranks) == {Arm.BM25: 2, Arm.GRAPH: 1}
    assert fused[2].arms == {Arm.GRAPH}
    # A small graph weight leaves the hybrid order alone: rank, never score, decides.
    light = fuse_ranked_lists([(hybrid, 1.0), (graph, 0.01)], k=60)
    assert [h.chunk.id for h in light] == ["a", "b", "c"]


def test_without_a_graph_graph_mode_is_a_typed_error_naming_the_build_command(
    folder: Path,
) -> None:
    with Index(folder, embedder=HashingEmbedder()) as plain:
        assert plain.search(QUERY, top_k=3)  # other modes are unaffected
        with pytest.raises(GraphNotBuilt, match="ragwright graph build"):
            plain.search(QUERY, mode="graph")
    empty = Index(folder, embedder=HashingEmbedder(), graph=MemoryGraph())
    with empty, pytest.raises(GraphNotBuilt, match="empty; run `ragwright graph build`"):
        empty.search(QUERY, mode="graph")


def test_graph_settings_are_search_settings_validated_when_made() -> None:
    request = SearchRequest.from_mapping(
        {"mode": "graph", "graph_damping": 0.7, "graph_seed_hits": 2}
    )
    assert request.graph == GraphSettings(damping=0.7, seed_hits=2)
    assert request.settings()["graph_damping"] == 0.7
    for bad in ({"graph_damping": 1.0}, {"graph_query_weight": 1.5}, {"graph_seed_hits": 2.5},
                {"graph_weight": -1}, {"graph_specificity": "high"},
                {"graph_tolerance": 0}, {"graph_tolerance": 0.5}):  # fmt: skip
        with pytest.raises(ConfigError, match="graph_"):
            SearchRequest.from_mapping(bad)
    with pytest.raises(UnsupportedScale):
        SearchRequest(mode="graph", min_score=0.5)


def test_graph_search_without_scipy_names_the_extra(
    facts: list[ChunkFacts], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(MissingDependencyError, match=r"ragwright\[graph\]"):
        build_walk_graph(build_snapshot(facts), relation_weight=1.0, synonym_weight=1.0)


def test_the_walk_follows_the_stores_graph_after_each_write(tmp_path: Path) -> None:
    """One index, one cached walk: a write changes the graph version, so the next search
    walks the new graph (the bridge appears with its document and goes with it)."""
    everything = {doc.source: doc for doc in documents()}
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        without = [doc for source, doc in everything.items() if source != "bridge.txt"]
        assert index.ingestion.documents(without, extractor="rules").ok

        def graph_sources() -> list[str]:
            return sources(index.search(QUERY, top_k=3, mode="graph", **MIN_MAX))

        assert "bridge.txt" not in graph_sources()
        assert index.ingestion.documents([everything["bridge.txt"]], extractor="rules").ok
        assert graph_sources()[:2] == ["first.txt", "bridge.txt"]
        assert index.documents.delete("bridge.txt")
        assert "bridge.txt" not in graph_sources() and graph_sources()[0] == "first.txt"


def test_search_options_name_every_request_field_but_the_processors() -> None:
    """`Index.search`'s keyword options are the request's fields: one list, checked here."""
    fields = {field.name for field in dataclasses.fields(SearchRequest)}
    assert set(SearchOptions.__annotations__) == fields - {"processors"}


def test_flat_settings_nest_into_the_graph_and_bm25_values() -> None:
    request = SearchRequest().with_settings(
        {"mode": "graph", "graph_max_new": 3, "graph_weight": 2.0, "bm25_k1": 0.9}
    )
    assert request.graph == GraphSettings(max_new=3, weight=2.0)
    assert request.bm25 == BM25Parameters(k1=0.9)
    assert request.settings()["graph_max_new"] == 3
    assert SearchRequest.from_mapping(request.settings()) == request
    with pytest.raises(ConfigError, match="graph_max_new must be an integer"):
        SearchRequest().with_settings({"graph_max_new": -1})
    with pytest.raises(ConfigError, match="unknown search setting 'graph_speed'"):
        SearchRequest().with_settings({"graph_speed": 2})


def test_a_query_naming_no_entity_reaches_the_chunk_stating_the_fact_it_asks_about() -> None:
    def facts(chunk_id: str, first: str, predicate: str, second: str) -> ChunkFacts:
        text = f"{first} {predicate} {second}."
        mentions = (
            Mention(0, len(first), first, first.lower(), "NAME"),
            Mention(len(text) - len(second) - 1, len(text) - 1, second, second.lower(), "NAME"),
        )
        relation = Relation(first.lower(), second.lower(), predicate, 1.0)
        return ChunkFacts(chunk_id, "test", mentions, (relation,))

    graph = MemoryGraph(
        [
            facts("c-river", "Brennick", "lies on the river", "Sollen"),
            facts("c-climb", "Orrin", "is climbed by", "Tessel"),
            facts("c-born", "Quill", "was born in", "Brennick"),
        ]
    )
    assert {f.predicate for f in graph.typed_facts()} == {
        "lies on the river", "is climbed by", "was born in"
    }  # fmt: skip
    snapshot = graph.graph_snapshot()
    embedder = HashingEmbedder()
    search = GraphSearch(None, FactLinker(graph, lambda: embedder))
    query = "which mountain is climbed each spring?"  # names no entity; no hybrid seeds
    linked = search.rank(query, [], snapshot, GraphSettings(fact_weight=1.0, fact_top=1), 10)
    assert linked and linked[0][0] == "c-climb"
    assert search.rank(query, [], snapshot, GraphSettings(fact_weight=0.0), 10) == []
