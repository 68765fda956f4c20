"""What ``mode="auto"`` pays to learn what an index can run, per question.

    nice .venv/bin/python benchmarks/plan_latency.py --index DIR [--rounds 2000]

On an index with a graph and communities in its store (as `communities.py` leaves the eval
cache), interleaved in one process: `Index.plan` (the rules, then the capabilities cached by
the graph and community versions, `ragwright.planner.capabilities`) against the same plan
with the capabilities read the way they were before the cache (the graph snapshot, then the
community build record, every question). Prints p50/p90 of each and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from ragwright.index import Index
from ragwright.planner import Capabilities, RulesPlanner, dispatch
from ragwright.ports import CommunityStore, GraphSource

QUESTION = "What are the main themes of the documents?"


def uncached(index: Index) -> Capabilities:
    store = index._store  # the store the cache reads, read as before it
    graph = isinstance(store, GraphSource) and store.graph_snapshot().chunk_count > 0
    built = isinstance(store, CommunityStore) and store.community_build() is not None
    return Capabilities(graph=graph, global_search=built)


def unavailable(able: Capabilities) -> Callable[[str], str | None]:
    """Why each mode cannot run, as the modes say it, from capabilities read just now."""
    reasons = {
        "graph": None if able.graph else "this index has no entity graph (graph build)",
        "global": None
        if able.global_search
        else "this index has no global search (no community reports)",
    }
    return lambda mode: reasons.get(mode)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    rules = RulesPlanner(aggregate_mode="global")
    with Index(args.index, create=False, read_only=True, planner=rules) as index:
        assert index.plan(QUESTION) == dispatch(rules.route(QUESTION), unavailable(uncached(index)))
        cached: list[float] = []
        before: list[float] = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            index.plan(QUESTION)
            cached.append(time.perf_counter() - started)
            started = time.perf_counter()
            dispatch(rules.route(QUESTION), unavailable(uncached(index)))
            before.append(time.perf_counter() - started)
    for name, values in (("cached capabilities", cached), ("read every question", before)):
        print(
            f"{name:<20} p50 {1e6 * statistics.median(values):8.1f} us  "
            f"p90 {1e6 * percentile(values, 0.9):8.1f} us"
        )
    ratio = statistics.median(before) / statistics.median(cached)
    print(f"ratio (read / cached), p50: {ratio:.2f}")


if __name__ == "__main__":
    main()
