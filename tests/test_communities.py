"""Communities: hierarchical Leiden over the entity graph, connected, measured."""

from __future__ import annotations

import itertools

import pytest

from ragwright.errors import ConfigError
from ragwright.graph.communities import detect_communities
from ragwright.graph.snapshot import build_snapshot
from ragwright.models.communities import CommunitySettings
from ragwright.models.graph import ChunkFacts, Mention, Relation


def _clique_facts(groups: list[list[str]], bridges: list[tuple[str, str]]) -> list[ChunkFacts]:
    """One chunk per clique naming all its entities (related pairwise), twice over so every
    entity is frequent; one chunk per bridge relating two entities of neighbouring cliques."""
    facts = []
    for copy in range(2):
        for number, group in enumerate(groups):
            mentions = tuple(Mention(0, 1, key, key, "ORG") for key in group)
            relations = tuple(
                Relation(a, b, "co", 1.0) for a, b in itertools.combinations(group, 2)
            )
            facts.append(ChunkFacts(f"c{copy}-{number:02d}", "test", mentions, relations))
    for number, (a, b) in enumerate(bridges):
        mentions = (Mention(0, 1, a, a, "ORG"), Mention(2, 3, b, b, "ORG"))
        facts.append(ChunkFacts(f"b{number:02d}", "test", mentions, (Relation(a, b, "co", 0.2),)))
    return facts


def ring_of_cliques(cliques: int = 10, size: int = 10) -> list[ChunkFacts]:
    groups = [[f"e{c:02d}-{n:02d}" for n in range(size)] for c in range(cliques)]
    bridges = [(groups[c][0], groups[(c + 1) % cliques][1]) for c in range(cliques)]
    return _clique_facts(groups, bridges)


def test_ten_cliques_in_a_ring_give_ten_communities() -> None:
    build = detect_communities(build_snapshot(ring_of_cliques()))
    top = build.at_level(0)
    assert len(top) == 10
    assert sorted({key[:3] for key in c.members} for c in top) == [{f"e{n:02d}"} for n in range(10)]
    assert all(c.size == 10 for c in top)
    level = build.levels[0]
    assert (level.communities, level.entities, level.largest, level.singletons) == (10, 100, 10, 0)
    assert level.disconnected == 0
    assert level.largest_share == pytest.approx(0.1)
    assert level.modularity > 0.8
    assert build.clustered == 100 and build.unclustered == 0


def test_the_same_graph_gives_the_same_communities() -> None:
    snapshot = build_snapshot(ring_of_cliques())
    assert detect_communities(snapshot).communities == detect_communities(snapshot).communities


def _related(groups: list[list[str]], weight: float, tag: str) -> list[ChunkFacts]:
    """One chunk per group naming all its entities, related pairwise with ``weight``."""
    return [
        ChunkFacts(
            f"{tag}{number}",
            "test",
            tuple(Mention(0, 1, key, key, "ORG") for key in group),
            tuple(Relation(a, b, "co", weight) for a, b in itertools.combinations(group, 2)),
        )
        for number, group in enumerate(groups)
    ]


def test_communities_larger_than_the_cap_are_refined_one_level_down() -> None:
    # Three groups of three 4-cliques: each group is one 12-entity community at level 0,
    # larger than the cap of 8, so level 1 splits it into its cliques.
    cliques = [[f"s{s}c{c}n{n}" for n in range(4)] for s in range(3) for c in range(3)]
    groups = [[key for clique in cliques[3 * s : 3 * s + 3] for key in clique] for s in range(3)]
    ring = [[groups[s][0], groups[(s + 1) % 3][1]] for s in range(3)]
    facts = [
        *_related(cliques, 1.0, "a"),
        *_related(cliques, 1.0, "b"),
        *_related(groups, 0.3, "g"),
        *_related(ring, 0.1, "r"),
    ]
    build = detect_communities(build_snapshot(facts), CommunitySettings(max_cluster_size=8))
    assert sorted(c.members for c in build.at_level(0)) == sorted(tuple(g) for g in groups)
    assert sorted(c.members for c in build.at_level(1)) == sorted(tuple(c) for c in cliques)
    by_id = {c.id: c for c in build.communities}
    for child in build.at_level(1):
        assert child.parent is not None and by_id[child.parent].level == 0
        assert set(child.members) <= set(by_id[child.parent].members)
    assert [(level.level, level.communities, level.largest) for level in build.levels] == [
        (0, 3, 12),
        (1, 9, 4),
    ]
    assert all(level.disconnected == 0 for level in build.levels)


def test_every_community_is_connected_even_when_leiden_returns_one_that_is_not() -> None:
    # Two separate cliques with equal starting structure: Leiden never joins components, but
    # rare entities are left out, so a community can only hold connected members.
    groups = [[f"a{n}" for n in range(4)], [f"b{n}" for n in range(4)]]
    build = detect_communities(build_snapshot(_clique_facts(groups, [])))
    assert sorted(c.members for c in build.at_level(0)) == [tuple(groups[0]), tuple(groups[1])]
    assert build.levels[0].disconnected == 0


def test_rare_entities_are_not_clustered() -> None:
    facts = ring_of_cliques(cliques=3, size=5)
    mentions = (Mention(0, 1, "rare", "rare", "ORG"), Mention(2, 3, "e00-00", "e00-00", "ORG"))
    rare = ChunkFacts("z", "test", mentions, (Relation("rare", "e00-00", "co", 1.0),))
    build = detect_communities(build_snapshot([*facts, rare]))
    assert "rare" not in {key for c in build.communities for key in c.members}
    assert build.unclustered == 1


def test_an_empty_graph_has_no_communities() -> None:
    build = detect_communities(build_snapshot([]))
    assert build.communities == () and build.levels == ()


@pytest.mark.parametrize(
    "bad", [{"max_cluster_size": 0}, {"min_mentions": -1}, {"weight_cap": 0.0}, {"seed": True}]
)
def test_bad_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CommunitySettings(**bad)  # type: ignore[arg-type]


def test_a_disconnected_cluster_is_split_into_its_components_and_its_children_follow() -> None:
    from ragwright.graph.communities import _adjacency, _connected, _Raw

    edges = [("a", "b", 1.0), ("c", "d", 1.0), ("d", "e", 1.0)]
    raw = [
        _Raw(0, 0, None, ("a", "b", "c", "d", "e")),  # what Leiden may return: two pieces
        _Raw(1, 1, 0, ("c", "d")),
        _Raw(1, 2, 0, ("e",)),
    ]
    communities = _connected(raw, _adjacency(edges))
    top = [c for c in communities if c.level == 0]
    assert [c.members for c in top] == [("c", "d", "e"), ("a", "b")]
    children = {c.members: c.parent for c in communities if c.level == 1}
    assert children == {("c", "d"): top[0].id, ("e",): top[0].id}
