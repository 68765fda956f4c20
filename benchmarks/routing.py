"""The mode planner on the labelled routing set: routing accuracy, and retrieval per question
type for each single mode and for ``auto``.

    nice .venv/bin/python benchmarks/routing.py --hotpot-cache /tmp/planner-hotpot \\
        --scifact-cache /tmp/planner-scifact [--comparison-mode hybrid|graph] \\
        [--aggregate-mode graph|hybrid|global] [--skip-scifact] [--skip-handbook]

The routing set is data/routing/questions.jsonl (`routing_set.py` builds it; labels come from
the data, not from a planner). Routing accuracy: the planner's own choice (before the index's
capabilities are checked) against the type's expected mode: lookup → hybrid, bridge → graph,
comparison → the ``--comparison-mode``, aggregate → the ``--aggregate-mode``. Retrieval runs
through
`Index.search` (auto included: the planner, the dispatch and the chosen mode's search, the
call ``search --mode auto`` makes), over the cached eval indexes with the spaCy graph of
`graph_hotpotqa.py` (a `MemoryGraph` from the facts cached beside each index; or, where the
cache's store holds communities, as `communities.py` leaves it, the store's own graph, and
global mode runs too), scored by eval's code: HotpotQA dev500 by type (all-support recall@5,
nDCG@10), SciFact test (nDCG@10). The aggregate questions are scored by
`aggregate_coverage.py` (coverage recall of their labelled documents, on the handbook with
its communities built).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from aggregate_coverage import measure
from graph_hotpotqa import QueryVectorCache, stored_facts
from ragwright.evaluation.config import EvalConfig
from ragwright.evaluation.dataset import EvalDataset, load_dataset
from ragwright.evaluation.index_cache import build_or_reuse_index
from ragwright.evaluation.scoring import QueryRun, run_queries, score_runs
from ragwright.graph.registry import create_extractor
from ragwright.graph.snapshot import MemoryGraph
from ragwright.index import Index
from ragwright.planner import RulesPlanner

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared" / "datasets"
SET = ROOT / "data" / "routing" / "questions.jsonl"
MODES = ("hybrid", "graph", "auto")
WITH_GLOBAL = ("hybrid", "graph", "global", "auto")


def routing_accuracy(rows: Sequence[dict[str, str]], planner: RulesPlanner) -> None:
    expected = {
        "lookup": "hybrid",
        "bridge": "graph",
        "comparison": planner.comparison_mode,
        "aggregate": planner.aggregate_mode,
    }
    tally: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        route = planner.route(row["question"])
        for split in (row["split"], "all"):
            tally[(row["type"], split)][route.planned] += 1
    print(
        f"routing accuracy (rules, comparison -> {planner.comparison_mode}, aggregate -> "
        f"{planner.aggregate_mode})"
    )
    print(f"{'type':<11} {'split':<5} {'n':>4} {'accuracy':>8}  chosen")
    for (kind, split), chosen in sorted(tally.items()):
        total = sum(chosen.values())
        share = chosen[expected[kind]] / total
        shown = ", ".join(f"{mode} {count}" for mode, count in chosen.most_common())
        print(f"{kind:<11} {split:<5} {total:>4} {share:>8.3f}  {shown}")
    correct = sum(tally[(k, "all")][expected[k]] for k in expected if (k, "all") in tally)
    print(f"{'all':<11} {'all':<5} {len(rows):>4} {correct / len(rows):>8.3f}", flush=True)


def open_with_graph(data: EvalDataset, cache: Path, planner: RulesPlanner) -> Index:
    base = EvalConfig(name="hybrid")
    built = build_or_reuse_index(data, base, cache)
    directory, embedder = built.info.directory, built.index.embedder
    built.close()
    extractor = create_extractor("spacy")
    safe_id = extractor.id.replace(":", "_").replace("/", "_")
    with Index(directory, embedder=embedder, create=False) as plain:
        if plain.graph_stats().entities and plain.community_build() is not None:
            # The store holds the graph and its communities: search both where they live.
            return Index(
                directory,
                embedder=QueryVectorCache(embedder),
                create=False,
                planner=planner,
                read_only=True,
            )
        facts = stored_facts(plain, extractor, directory / f"graph-facts-{safe_id}.json")
    graph = MemoryGraph(facts)
    return Index(
        directory,
        embedder=QueryVectorCache(embedder),
        create=False,
        graph=graph,
        planner=planner,
        read_only=True,
    )


def modes_of(index: Index) -> tuple[str, ...]:
    return WITH_GLOBAL if index.community_build() is not None else MODES


def runs_by_mode(index: Index, data: EvalDataset, ids: Sequence[str]) -> dict[str, list[QueryRun]]:
    base = EvalConfig(name="hybrid")
    queries = {q: data.queries[q] for q in ids}
    return {
        mode: run_queries(
            index, queries, replace(base, name=mode, search=base.search.but(mode=mode))
        )
        for mode in modes_of(index)
    }


def report(
    title: str,
    runs: dict[str, list[QueryRun]],
    data: EvalDataset,
    groups: dict[str, set[str]],
    fields: Sequence[tuple[str, str]],
) -> None:
    print(f"\n{title}")
    modes = [mode for mode in WITH_GLOBAL if mode in runs]
    print(
        f"{'type':<22} {'n':>4} " + " ".join(f"{m + ' ' + n:>13}" for m in modes for n, _ in fields)
    )
    for group, ids in groups.items():
        cells = []
        for mode in modes:
            chosen = [run for run in runs[mode] if run.query_id in ids]
            metrics, _ = score_runs(chosen, {q: data.qrels[q] for q in ids})
            cells += [f"{getattr(metrics, field):>13.3f}" for _, field in fields]
        print(f"{group:<22} {len(ids):>4} " + " ".join(cells), flush=True)


def agreement(runs: dict[str, list[QueryRun]]) -> None:
    """How many of auto's rankings are hybrid's and graph's, exactly (a check that auto ran
    the mode its route names)."""
    auto = {run.query_id: run.ranked_ids for run in runs["auto"]}
    same = {
        mode: sum(auto[run.query_id] == run.ranked_ids for run in runs[mode])
        for mode in ("hybrid", "graph")
    }
    both = sum(
        h.ranked_ids == g.ranked_ids for h, g in zip(runs["hybrid"], runs["graph"], strict=True)
    )
    print(
        f"auto's ranking equals hybrid's for {same['hybrid']}, graph's for {same['graph']} "
        f"of {len(auto)} queries (hybrid's and graph's are equal for {both})"
    )


def auto_modes(index: Index, rows: Sequence[dict[str, str]]) -> None:
    chosen: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        chosen[row["type"]][index.plan(row["question"]).mode] += 1
    print("auto ran: " + "; ".join(f"{k} {dict(c)}" for k, c in sorted(chosen.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hotpot", type=Path, default=SHARED / "hotpotqa-dev500")
    parser.add_argument("--scifact", type=Path, default=SHARED / "scifact")
    parser.add_argument("--hotpot-cache", type=Path, required=True)
    parser.add_argument("--scifact-cache", type=Path, required=True)
    parser.add_argument("--comparison-mode", default="hybrid", choices=("hybrid", "graph"))
    parser.add_argument("--aggregate-mode", default="graph", choices=("hybrid", "graph", "global"))
    parser.add_argument("--skip-scifact", action="store_true")
    parser.add_argument("--skip-handbook", action="store_true")
    parser.add_argument("--routing-only", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in SET.read_text("utf-8").splitlines() if line.strip()]
    planner = RulesPlanner(comparison_mode=args.comparison_mode, aggregate_mode=args.aggregate_mode)
    routing_accuracy(rows, planner)
    if args.routing_only:
        return
    hotpot = load_dataset(args.hotpot)
    typed = [row for row in rows if row["source"] == "hotpotqa"]
    groups: dict[str, set[str]] = {"all 500": {row["id"] for row in typed}}
    for kind in ("bridge", "comparison"):
        for split in ("dev", "test", "all"):
            groups[f"{kind} {split}"] = {
                row["id"] for row in typed if row["type"] == kind and split in (row["split"], "all")
            }
    with open_with_graph(hotpot, args.hotpot_cache, planner) as index:
        auto_modes(index, typed)
        runs = runs_by_mode(index, hotpot, hotpot.query_ids)
    agreement(runs)
    fields = (("AS@5", "all_support_at_5"), ("nDCG", "ndcg_at_10"))
    report("HotpotQA dev500 by type", runs, hotpot, groups, fields)
    if not args.skip_handbook:
        # The defaults (`ingest --graph`, `graph communities`); hybrid and graph capped too.
        measure("spacy", 2, (5, 10), caps=(1,))
    if args.skip_scifact:
        return
    scifact = load_dataset(args.scifact)
    claims = [row for row in rows if row["source"] == "scifact" and row["split"] == "test"]
    with open_with_graph(scifact, args.scifact_cache, planner) as index:
        auto_modes(index, claims)
        runs = runs_by_mode(index, scifact, scifact.query_ids)
    agreement(runs)
    fields = (("nDCG", "ndcg_at_10"), ("R@10", "recall_at_10"))
    report("SciFact test (lookup)", runs, scifact, {"all 300": set(scifact.query_ids)}, fields)


if __name__ == "__main__":
    main()
