"""Aggregate questions: how much of what a complete answer must cover does each mode retrieve?

    nice .venv/bin/python benchmarks/aggregate_coverage.py [--top-k 5 10] [--extractor spacy] \\
        [--min-mentions 2] [--caps 1 2 3] [--depths 0 40]

The 40 aggregate questions of the routing set (data/routing/questions.jsonl, written over the
handbook corpus) have gold in data/routing/aggregate_gold.jsonl: for each, the documents a
complete answer must cover, labelled from the corpus before this was first run. Coverage
recall@k is the share of those documents among the documents of the first k hits.

The handbook is ingested as ``ragwright ingest --graph`` does it (the default MiniLM
embedder, the spaCy extractor), its communities are built as ``ragwright graph communities
--rebuild`` does (extractive reports), and every question runs through `Index.search` in
hybrid, graph, global and auto mode, as ``ragwright search --mode …`` runs it (auto with
the planner's defaults: aggregate questions go to graph search with at most one chunk of a
document in the top k), and, for each of ``--caps``, hybrid and graph search with that
``per_document`` cap (``hybrid/1``: at most one chunk a document), at each of ``--depths``
(``graph/1@40``: from 40 candidates). Printed: the coverage per
split and mode, and the modes auto ran.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ragwright import Index
from ragwright.models.communities import CommunitySettings

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "data" / "handbook" / "corpus"
ROUTING = ROOT / "data" / "routing"
MODES = ("hybrid", "graph", "global", "auto")
#: A column: its label, the search mode, its per_document cap (0: none) and arm_depth (0: the
#: default, max(2·top_k, 20)).
Column = tuple[str, str, int, int]


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def coverage(index: Index, question: str, column: Column, required: set[str], k: int) -> float:
    _, mode, cap, depth = column
    hits = index.search(question, mode=mode, top_k=k, per_document=cap, arm_depth=depth)
    found = {Path(hit.source).name for hit in hits[:k]}
    return len(found & required) / len(required)


def columns(caps: Sequence[int], depths: Sequence[int] = (0,)) -> list[Column]:
    plain = [(mode, mode, 0, 0) for mode in MODES]
    return plain + [
        (f"{mode}/{cap}" + (f"@{depth}" if depth else ""), mode, cap, depth)
        for cap in caps
        for depth in depths
        for mode in ("hybrid", "graph")
    ]


def measure(
    extractor: str,
    min_mentions: int,
    ks: Sequence[int],
    caps: Sequence[int] = (),
    depths: Sequence[int] = (0,),
) -> None:
    """Ingest the handbook with ``extractor``'s graph, build its communities, print the
    coverage table."""
    questions = {
        str(row["id"]): row
        for row in _jsonl(ROUTING / "questions.jsonl")
        if row["type"] == "aggregate"
    }
    gold = {
        str(row["id"]): {str(name) for name in row["documents"]}  # type: ignore[attr-defined]
        for row in _jsonl(ROUTING / "aggregate_gold.jsonl")
    }
    assert set(gold) == set(questions), "every aggregate question has gold, and only they"
    with tempfile.TemporaryDirectory() as tmp, Index(Path(tmp) / "index") as index:
        started = time.perf_counter()
        index.ingest(CORPUS, extractor=extractor)
        ingested = time.perf_counter() - started
        build = index.build_communities(CommunitySettings(min_mentions=min_mentions))
        built = time.perf_counter() - started - ingested
        stats = index.graph_stats()
        print(
            f"\nhandbook aggregates, {extractor} graph: {stats.entities} entities, {stats.edges} "
            f"edges; min_mentions {min_mentions}: {build.clustered} clustered, "
            f"{build.unclustered} left out; ingest with the graph {ingested:.1f} s, "
            f"communities and their extractive reports {built:.1f} s"
        )
        for level in build.levels:
            print(
                f"  level {level.level}: {level.communities} communities, largest share "
                f"{level.largest_share:.3f}, singletons {level.singleton_share:.3f}, "
                f"modularity {level.modularity:.3f}, disconnected {level.disconnected}"
            )
        ran = Counter(index.plan(str(questions[q]["question"])).mode for q in questions)
        print(f"auto ran: {dict(ran)}")
        _report(index, questions, gold, ks, columns(caps, depths))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top-k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--extractor", default="spacy", help="the graph's extractor (spec)")
    parser.add_argument("--min-mentions", type=int, default=CommunitySettings().min_mentions)
    parser.add_argument("--caps", type=int, nargs="*", default=[1], help="per_document caps")
    parser.add_argument(
        "--depths", type=int, nargs="+", default=[0], help="arm_depth of the capped columns"
    )
    args = parser.parse_args()
    measure(args.extractor, args.min_mentions, args.top_k, args.caps, args.depths)


def _report(
    index: Index,
    questions: dict[str, dict[str, object]],
    gold: dict[str, set[str]],
    ks: Sequence[int],
    shown: Sequence[Column],
) -> None:
    print("coverage recall (share of required documents among the top-k hits' documents)")
    for k in ks:
        header = " ".join(f"{column[0]:>10}" for column in shown)
        print(f"@{k:<5} {'n':>3} {header}")
        scores = {
            (q, column[0]): coverage(index, str(questions[q]["question"]), column, gold[q], k)
            for q in questions
            for column in shown
        }
        for split in ("dev", "test", "all"):
            ids = [q for q in questions if split in (questions[q]["split"], "all")]
            cells = [
                f"{sum(scores[(q, column[0])] for q in ids) / len(ids):>10.3f}" for column in shown
            ]
            print(f"{split:<6} {len(ids):>3} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
