"""Passage nodes in the walk: hybrid's hits restart the walk in proportion to their scores,
so a passage hybrid ranks low that shares an entity with its first hit overtakes a better
scored passage that shares none, and a hit that names no entity keeps its own seed."""

from __future__ import annotations

from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.graph.snapshot import build_snapshot
from ragwright.models.graph import ChunkFacts, Mention, Relation


def chunk(chunk_id: str, *names: str) -> ChunkFacts:
    mentions = tuple(Mention(0, 1, name, name, "THING") for name in names)
    relations = tuple(
        Relation(a, b, "co_chunk", 0.5) for i, a in enumerate(names) for b in names[i + 1 :]
    )
    return ChunkFacts(chunk_id, "test:1", mentions, relations)


# The question: "Which river runs through the town where Ada Quill was born?"
FACTS = [
    chunk("first", "ada quill", "brennick"),  # hybrid's first hit: the first hop
    chunk("second", "tessel club", "mount orrin"),  # hybrid's second: no bridge
    chunk("bridge", "brennick", "sollen"),  # the second hop, ranked low by hybrid
    *(chunk(f"filler-{i}", "mount orrin", f"peak {i}") for i in range(6)),
]
# Hybrid's ranking and scores ("plain" names no entity, so it is no node of the graph).
RANKING = ["first", "second", "plain", "filler-0", "filler-1", "bridge", "filler-2", "filler-3"]
SCORES = [1.0, 0.9, 0.85, 0.8, 0.75, 0.7, 0.2, 0.0]


def test_the_walk_lifts_the_passage_that_shares_an_entity_with_the_first_hit() -> None:
    snapshot = build_snapshot(FACTS)
    settings = GraphSettings(seed_hits=8, entity_hits=1)
    ranked = GraphSearch().rank("Which river?", RANKING, snapshot, settings, 10, SCORES)
    order = [chunk_id for chunk_id, _ in ranked]
    assert order[:2] == ["first", "bridge"]
    assert order.index("bridge") < order.index("second")
    # Only hybrid's first two hits seeded (the walk before passage nodes took hybrid's
    # scores), the bridge is reached through Brennick alone and stays behind the second
    # (at decay 4: the second's own seed, 0.9 ** 4, outweighs what reaches the bridge).
    two = GraphSettings(seed_hits=2, entity_hits=1, seed_decay=4.0)
    ranked = GraphSearch().rank("Which river?", RANKING, snapshot, two, 10, SCORES)
    assert [chunk_id for chunk_id, _ in ranked][:3] == ["first", "second", "bridge"]


def test_a_seeded_hit_that_names_no_entity_keeps_its_seed() -> None:
    snapshot = build_snapshot(FACTS)
    settings = GraphSettings(seed_hits=8, entity_hits=1, chunk_seed_weight=1.0)
    ranked = dict(GraphSearch().rank("Which river?", RANKING, snapshot, settings, 10, SCORES))
    assert "plain" in ranked and "plain" not in snapshot.chunk_ids
    # All the mass on passages: "plain" holds (1 - damping) of its share of it.
    seeds = [(score / 1.0) ** settings.seed_decay for score in SCORES]
    share = seeds[RANKING.index("plain")] / sum(seeds)
    assert abs(ranked["plain"] - (1 - settings.damping) * share) < 1e-9
