"""build_snapshot's aggregation rules (the ones every store's graph_snapshot follows) and
MemoryGraph, the in-memory GraphSource."""

from __future__ import annotations

import pytest

from ragwright.errors import ConfigError
from ragwright.graph.snapshot import EDGE_WEIGHT_CAP, MemoryGraph, build_snapshot
from ragwright.models.graph import ChunkFacts, Mention, Relation
from ragwright.ports import GraphSource

EXTRACTOR = "test:1"


def facts(chunk_id: str, names: list[str], relations: list[tuple[str, str, float]]) -> ChunkFacts:
    mentions = tuple(Mention(0, len(n), n, n.casefold(), "NAME") for n in names)
    links = tuple(Relation(a, b, "co_sentence", w) for a, b, w in relations)
    return ChunkFacts(chunk_id, EXTRACTOR, mentions, links)


FACTS = [
    facts("c2", ["Acme", "Springfield", "acme"], [("acme", "springfield", 1.0)]),
    facts("c1", ["Alice", "ACME", "Acme"], [("alice", "acme", 1.0), ("acme", "ghost", 1.0)]),
    facts("c3", [], []),
]


def test_entities_chunks_and_mentions_aggregate_by_key_and_chunk() -> None:
    snapshot = build_snapshot(FACTS)
    assert snapshot.entity_keys == ("acme", "alice", "springfield")
    assert snapshot.entity_names == ("Acme", "Alice", "Springfield")  # most frequent form
    assert snapshot.chunk_ids == ("c1", "c2")  # c3 was extracted but names nothing
    incidence = list(
        zip(
            snapshot.mention_entity.tolist(),
            snapshot.mention_chunk.tolist(),
            snapshot.mention_count.tolist(),
            strict=True,
        )
    )
    assert incidence == [(0, 0, 2.0), (0, 1, 2.0), (1, 0, 1.0), (2, 1, 1.0)]


def test_edges_sum_their_evidence_up_to_the_cap_and_ignore_unknown_entities() -> None:
    snapshot = build_snapshot(FACTS)
    edges = list(zip(snapshot.edge_source.tolist(), snapshot.edge_target.tolist(), strict=True))
    assert edges == [(0, 1), (0, 2)]  # "ghost" is no entity: no evidence
    many = [facts(f"c{i}", ["A", "B"], [("a", "b", 1.0)]) for i in range(10)]
    assert build_snapshot(many).edge_weight.tolist() == [EDGE_WEIGHT_CAP]
    assert build_snapshot(many[:2]).edge_weight.tolist() == [2.0]


def test_synonym_links_keep_their_largest_weight_and_skip_unknown_keys() -> None:
    links = [("springfield", "acme", 0.5), ("acme", "springfield", 0.9), ("acme", "nobody", 1.0)]
    snapshot = build_snapshot(FACTS, links)
    assert snapshot.synonym_source.tolist() == [0] and snapshot.synonym_target.tolist() == [2]
    assert snapshot.synonym_weight.tolist() == pytest.approx([0.9])


def test_the_version_is_deterministic_and_changes_with_any_fact() -> None:
    version = build_snapshot(FACTS).version
    assert build_snapshot(reversed(FACTS)).version == version
    changed = [*FACTS[:2], facts("c3", ["Bob"], [])]
    assert build_snapshot(changed).version != version
    assert build_snapshot(FACTS, [("acme", "alice", 0.8)]).version != version


def test_facts_of_two_extractors_or_twice_for_a_chunk_are_refused() -> None:
    other = ChunkFacts("c9", "other:2", (), ())
    with pytest.raises(ConfigError, match="several extractors"):
        build_snapshot([*FACTS, other])
    with pytest.raises(ConfigError, match="two sets of graph facts for chunk 'c1'"):
        build_snapshot([*FACTS, FACTS[1]])


def test_memory_graph_is_a_graph_source_whose_version_follows_its_facts() -> None:
    graph = MemoryGraph(FACTS)
    assert isinstance(graph, GraphSource)
    before = graph.graph_version()
    assert graph.graph_snapshot() is graph.graph_snapshot()  # cached while nothing changes
    graph.add([facts("c3", ["Bob"], [])])
    assert graph.graph_version() != before
    assert "bob" in graph.graph_snapshot().entity_keys
    assert MemoryGraph().graph_snapshot().chunk_count == 0
