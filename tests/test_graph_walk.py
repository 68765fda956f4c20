"""The local walk (forward-push personalized PageRank): it agrees with the exact walk within
the mass it leaves unspread, its work depends on the seeds' neighbourhood and not on the
graph's size, a hub entity does not drag it across the corpus, and walks on one cached graph
(in turn or from several threads) do not disturb each other."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ragwright.graph.ppr import (
    WalkGraph,
    build_walk_graph,
    local_pagerank,
    personalized_pagerank,
)
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.graph.snapshot import build_snapshot
from ragwright.models.graph import ChunkFacts, Mention, Relation


def chain_facts(prefix: str, chunks: int, seed: int) -> list[ChunkFacts]:
    """Chunks each naming 4 entities: 2 of their own and 2 of earlier chunks, related."""
    rng = np.random.default_rng(seed)
    facts = []
    for number in range(chunks):
        names = [f"{prefix} {number} a", f"{prefix} {number} b"]
        names += [f"{prefix} {int(rng.integers(max(number, 1)))} a" for _ in range(2)]
        mentions = tuple(Mention(0, 1, name, name, "THING") for name in names)
        keys = sorted(set(names))
        relations = tuple(
            Relation(a, b, "co", 0.5) for i, a in enumerate(keys) for b in keys[i + 1 :]
        )
        facts.append(ChunkFacts(f"{prefix}-{number:05d}", "test:1", mentions, relations))
    return facts


def walk_graph(facts: list[ChunkFacts]) -> WalkGraph:
    return build_walk_graph(build_snapshot(facts), relation_weight=1.0, synonym_weight=1.0)


def entity(graph_facts: list[ChunkFacts], key: str) -> int:
    return build_snapshot(graph_facts).entity_keys.index(key)


def test_the_local_walk_agrees_with_the_exact_walk_within_what_it_left() -> None:
    facts = chain_facts("x", 300, seed=1)
    graph = walk_graph(facts)
    seeds = np.array([entity(facts, "x 10 a"), graph.entities + 12], dtype=np.int64)
    weights = np.array([0.4, 0.6])
    dense = np.zeros(graph.nodes, dtype=np.float32)
    dense[seeds] = weights
    exact = personalized_pagerank(graph, dense, damping=0.5).astype(np.float64)
    for tolerance in (1e-3, 1e-5):
        local = local_pagerank(graph, seeds, weights, 0.5, tolerance)
        estimate = np.zeros(graph.nodes)
        estimate[local.nodes] = local.scores
        assert np.all(estimate <= exact + 1e-6)  # an estimate never overshoots
        assert float(np.abs(exact - estimate).sum()) <= local.residual + 1e-4
    assert local.residual < 0.05
    assert np.array_equal(np.argsort(-estimate)[:10], np.argsort(-exact)[:10])
    assert len(set(np.argsort(-estimate)[:20]) & set(np.argsort(-exact)[:20])) >= 18


def test_the_walk_is_the_same_however_much_graph_lies_beyond_its_reach() -> None:
    near = chain_facts("x", 200, seed=2)
    far = chain_facts("y", 3000, seed=3)  # another component, fifteen times larger
    small, large = walk_graph(near), walk_graph(near + far)
    ranked_small = GraphSearch().rank("x 5 a", ["x-00007"], build_snapshot(near),
                                      GraphSettings(), depth=50)  # fmt: skip
    ranked_large = GraphSearch().rank("x 5 a", ["x-00007"], build_snapshot(near + far),
                                      GraphSettings(), depth=50)  # fmt: skip
    assert ranked_small == ranked_large and ranked_small
    seeds, weights = np.array([entity(near, "x 5 a")]), np.array([1.0])
    assert len(local_pagerank(small, seeds, weights, 0.5, 1e-5).nodes) == len(
        local_pagerank(large, seeds, weights, 0.5, 1e-5).nodes
    )
    assert large.nodes > 10 * small.nodes


def test_a_hub_entity_is_not_pushed_across_the_corpus() -> None:
    facts = chain_facts("x", 2000, seed=4)
    hub = Mention(0, 1, "Everywhere", "everywhere", "THING")
    facts = [ChunkFacts(f.chunk_id, f.extractor, (*f.mentions, hub), f.relations) for f in facts]
    graph = walk_graph(facts)
    seeds = np.array([graph.entities + 0], dtype=np.int64)  # a chunk naming the hub
    walked = local_pagerank(graph, seeds, np.array([1.0]), 0.5, 1e-4)
    hub_node = entity(facts, "everywhere")
    # The hub got mass, but never tolerance x its 2,000 links: it was not pushed, and none
    # of its chunks was visited through it.
    assert hub_node not in walked.nodes.tolist()
    assert len(walked.nodes) < 200


def test_walks_on_one_cached_graph_do_not_disturb_each_other() -> None:
    facts = chain_facts("x", 400, seed=5)
    graph = walk_graph(facts)
    starts = [np.array([graph.entities + n], dtype=np.int64) for n in range(0, 400, 25)]

    def walk(seeds: np.ndarray) -> tuple[list[int], list[float]]:
        result = local_pagerank(graph, seeds, np.array([1.0]), 0.5, 1e-5)
        return result.nodes.tolist(), result.scores.tolist()

    fresh = local_pagerank(walk_graph(facts), starts[0], np.array([1.0]), 0.5, 1e-5)
    serial = [walk(seeds) for seeds in starts]
    assert walk(starts[0]) == serial[0] == (fresh.nodes.tolist(), fresh.scores.tolist())
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(walk, starts * 3))
    assert threaded == serial * 3
    estimate, residual = graph.buffers()
    assert not estimate.any() and not residual.any()


def test_no_seed_mass_walks_nowhere() -> None:
    graph = walk_graph(chain_facts("x", 20, seed=6))
    empty = local_pagerank(graph, np.zeros(0, np.int64), np.zeros(0), 0.5, 1e-5)
    zero = local_pagerank(graph, np.array([0]), np.array([0.0]), 0.5, 1e-5)
    assert len(empty.nodes) == len(zero.nodes) == 0
    assert empty.residual == zero.residual == pytest.approx(0.0)
