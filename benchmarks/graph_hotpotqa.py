"""Graph mode against hybrid on multi-hop questions (HotpotQA dev500, or any BEIR folder).

    nice .venv/bin/python benchmarks/graph_hotpotqa.py --cache-dir /tmp/gsearch-hotpot \\
        [--dataset ../shared/datasets/hotpotqa-dev500] [--split test] [--extractor spacy] [--grid]
        [--set graph_fact_weight=0.5 ...] [--questions 200:500]

The index is the one ``ragwright eval`` builds (its cache, `build_or_reuse_index`: the default
chunking and the MiniLM embedder, through `Index.ingest_documents`); the graph is extracted
from the stored chunks with the chosen extractor (facts cached beside the index, by extractor
id), built with `build_snapshot` into a `MemoryGraph` and handed to `Index(graph=...)`, so
hybrid and graph both run through `Index.search`, the call ``search --mode graph`` makes, and
are scored by eval's own code. Splits: questions 0–199 (``dev``, where ``--grid`` tunes),
200–499 (``test``) and all.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragwright.evaluation.config import EvalConfig
from ragwright.evaluation.dataset import EvalDataset, load_dataset
from ragwright.evaluation.index_cache import build_or_reuse_index
from ragwright.evaluation.scoring import Metrics, run_queries, score_runs
from ragwright.graph.registry import create_extractor
from ragwright.graph.snapshot import MemoryGraph
from ragwright.index import Index
from ragwright.models.graph import ChunkFacts, Mention, Relation
from ragwright.pipeline.graph.fact_vectors import embed_fact_vectors
from ragwright.ports import Embedder, Extractor, Vectors

ROOT = Path(__file__).resolve().parent
DATASET = ROOT.parent.parent / "shared" / "datasets" / "hotpotqa-dev500"
DEV = slice(0, 200)
TEST = slice(200, None)
COLUMNS = (
    ("nDCG@10", "ndcg_at_10"),
    ("R@2", "recall_at_2"),
    ("R@5", "recall_at_5"),
    ("R@10", "recall_at_10"),
    ("AS@2", "all_support_at_2"),
    ("AS@5", "all_support_at_5"),
    ("AS@10", "all_support_at_10"),
)


class QueryVectorCache:
    """The index's embedder with each query's vector remembered: configurations differ in
    fusion and graph settings, not in what a query embeds to."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.space = inner.space
        self._queries: dict[str, Vectors] = {}

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]


def stored_facts(index: Index, extractor: Extractor, cache: Path) -> list[ChunkFacts]:
    """Every stored chunk's facts: read from ``cache`` when it holds this extractor's, else
    extracted (and the throughput printed) and written there."""
    if cache.exists():
        return [_facts_from_json(row) for row in json.loads(cache.read_text("utf-8"))]
    chunks, after = [], None
    while page := index.documents.export.chunk_page(after, 1000):
        chunks += page
        after = page[-1].id
    started = time.perf_counter()
    facts = extractor.extract(chunks)
    elapsed = time.perf_counter() - started
    print(
        f"extracted {len(chunks):,} chunks with {extractor.id} in {elapsed:.1f} s "
        f"({len(chunks) / elapsed:.1f} chunks/s)"
    )
    cache.write_text(json.dumps([_facts_to_json(f) for f in facts]), "utf-8")
    return facts


def store_facts(
    directory: Path, embedder: Embedder, extractor: Extractor, facts: list[ChunkFacts]
) -> None:
    """The facts written into the index (once), then their vectors, as `graph build` does
    (no synonym links: the same graph as the MemoryGraph's)."""
    with Index(directory, embedder=embedder, create=False) as kb:
        store: Any = kb.graph.source
        if not store.graph_stats().extracted.get(extractor.id):
            for start in range(0, len(facts), 256):
                store.write_facts(facts[start : start + 256])
        started = time.perf_counter()
        stored = embed_fact_vectors(store, lambda: embedder)
        elapsed = time.perf_counter() - started
        print(f"fact vectors: {stored:,} stored in {elapsed:.1f} s", flush=True)


def _facts_to_json(facts: ChunkFacts) -> dict[str, object]:
    return {
        "chunk": facts.chunk_id,
        "extractor": facts.extractor,
        "mentions": [[m.start, m.end, m.text, m.key, m.label] for m in facts.mentions],
        "relations": [[r.source, r.target, r.label, r.weight] for r in facts.relations],
    }


def _facts_from_json(row: dict[str, list[list[object]] | str]) -> ChunkFacts:
    mentions = tuple(Mention(*m) for m in row["mentions"])  # type: ignore[arg-type]
    relations = tuple(Relation(*r) for r in row["relations"])  # type: ignore[arg-type]
    return ChunkFacts(str(row["chunk"]), str(row["extractor"]), mentions, relations)


def score(index: Index, data: EvalDataset, config: EvalConfig, part: slice) -> Metrics:
    ids = data.query_ids[part]
    queries = {q: data.queries[q] for q in ids}
    runs = run_queries(index, queries, config)
    metrics, _ = score_runs(runs, {q: data.qrels[q] for q in ids})
    return metrics


def row(label: str, metrics: Metrics) -> str:
    cells = " ".join(f"{getattr(metrics, field):>7.3f}" for _, field in COLUMNS)
    return f"{label:<44} {cells}"


def header(title: str) -> str:
    return f"{title:<44} " + " ".join(f"{name:>7}" for name, _ in COLUMNS)


def grid(index: Index, data: EvalDataset, base: EvalConfig, trials: Sequence[str]) -> None:
    """Tune on the dev questions: each trial is space-separated KEY=VALUE graph settings."""
    print(header("dev (questions 0-199)"))
    print(row("hybrid", score(index, data, base, DEV)), flush=True)
    for trial in trials:
        overrides = dict(_setting(item) for item in trial.split())
        search = base.search.with_settings({"mode": "graph", **overrides})
        print(
            row(f"graph {trial}", score(index, data, replace(base, search=search), DEV)), flush=True
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--split", default="test", help="the qrels split (SciFact: tune on train)")
    parser.add_argument("--extractor", default="spacy", help="spacy, spacy:noun-chunks, rules")
    parser.add_argument(
        "--grid", nargs="+", metavar="TRIAL", help="tune on the dev questions: 'KEY=V KEY=V' each"
    )
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="KEY=VALUE", help="graph settings to report"
    )
    parser.add_argument(
        "--stored",
        action="store_true",
        help="write the facts into the index (its copy: the cache dir is written) and search "
        "its own graph, with the fact vectors graph build stores, instead of a MemoryGraph",
    )
    parser.add_argument(
        "--all-only", action="store_true", help="report all questions only, not the two halves"
    )
    parser.add_argument(
        "--questions",
        metavar="START:END",
        help="report only questions START to END-1 (e.g. 200:500, the held-out part)",
    )
    args = parser.parse_args()
    data = load_dataset(args.dataset, split=args.split)
    base = EvalConfig(name="hybrid")
    built = build_or_reuse_index(data, base, args.cache_dir)
    directory, embedder = built.info.directory, built.index.embedder
    built.close()
    extractor = create_extractor(args.extractor)
    safe_id = extractor.id.replace(":", "_").replace("/", "_")
    with Index(directory, embedder=embedder, create=False) as plain:
        facts = stored_facts(plain, extractor, directory / f"graph-facts-{safe_id}.json")
    graph = MemoryGraph(facts)
    snapshot = graph.graph_snapshot()
    if args.stored:
        store_facts(directory, embedder, extractor, facts)
    print(
        f"graph: {snapshot.entity_count:,} entities, {snapshot.chunk_count:,} chunks, "
        f"{len(snapshot.mention_entity):,} mentions, {len(snapshot.edge_source):,} edges"
    )
    given = None if args.stored else graph
    with Index(directory, embedder=QueryVectorCache(embedder), create=False, graph=given) as index:
        if args.grid:
            grid(index, data, base, args.grid)
            return
        overrides = dict(_setting(item) for item in args.set)
        search = base.search.with_settings({"mode": "graph", **overrides})
        graph_config = replace(base, name="graph", search=search)
        shown = {k: v for k, v in search.settings().items() if k.startswith("graph_")}
        print(f"graph settings: {json.dumps(shown)}, rrf_k {search.rrf_k}")
        parts = [("dev 0-199", DEV), ("test 200-499", TEST), ("all", slice(None))]
        if args.questions:
            start, _, end = args.questions.partition(":")
            parts = [(f"questions {args.questions}", slice(int(start), int(end) or None))]
        elif args.all_only:
            parts = parts[2:]
        for title, part in parts:
            print(header(f"{title} ({len(data.query_ids[part])} questions)"))
            hybrid = score(index, data, base, part)
            graphed = score(index, data, graph_config, part)
            print(row("hybrid (default)", hybrid))
            print(row(f"graph ({extractor.id})", graphed))
            deltas = " ".join(
                f"{getattr(graphed, f) - getattr(hybrid, f):>+7.3f}" for _, f in COLUMNS
            )
            print(f"{'graph - hybrid':<44} {deltas}", flush=True)


def _setting(item: str) -> tuple[str, float | int]:
    key, _, value = item.partition("=")
    number = float(value)
    return key, int(number) if key in (
        "graph_seed_hits",
        "graph_entity_hits",
        "graph_keep_top",
        "graph_keep_named",
        "graph_bridge_hits",
        "graph_bridge_rank",
        "graph_named_window",
        "graph_max_new",
        "graph_known_depth",
        "graph_fact_top",
        "graph_rrf_k",
        "rrf_k",
        "arm_depth",
    ) else number


if __name__ == "__main__":
    main()
