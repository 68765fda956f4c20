"""Does search put the passage holding the answer first? evidence@1 and evidence@5 on a held-out
question set, per split, for each ranking variant, in one run.

    nice .venv/bin/python benchmarks/evidence.py [--set docs-qa|handbook] [--cache-dir DIR]
        [--embedder minilm|bge-small] [--variant NAME]...

Ingests the set's ``corpus/`` with the default configuration (what ``ragwright ingest`` does;
into ``--cache-dir`` when given, so a second run embeds nothing), then runs ``Index.search``
(hybrid, top 10) for every answerable question. A hit holds the evidence when its exact span
(``hit.text``, whitespace-normalized) contains the evidence sentence; evidence@k is the share of
questions with such a hit among the first k. The variants differ in the `passage_first` step
over the fused candidates (``before`` without it, ``after`` the default search) and in the
cross-encoder reranking the first 20 candidates (``rerank``: the default search and the
reranker; ``rerank-only``: the reranker without the passage step). ``--embedder`` builds the
index with another embedder (in an index of its own). Tune on ``dev``; ``test`` is reported,
never used to choose. Each variant's milliseconds per query (median) are printed beside it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragwright import Index
from ragwright.chunkers import DEFAULT_CHUNKER
from ragwright.index import ChunkingConfig
from ragwright.models import Hit
from ragwright.pipeline.search.request import PassageWeights
from ragwright.processors import PassageFirst

DATA = Path(__file__).parent / "data"
#: Search settings per variant: ``before`` switches the passage_first step off, ``after`` is
#: the default search (the step on, with the [search] defaults).
VARIANTS: dict[str, dict[str, Any]] = {
    "before": {"passage": PassageWeights(0.0, 0.0)},
    "after": {},
    "rerank": {"rerank": "cross-encoder"},
    "rerank-only": {"rerank": "cross-encoder", "passage": PassageWeights(0.0, 0.0)},
}
OFF = VARIANTS["before"]


def flat(text: str) -> str:
    return " ".join(text.split())


def questions(name: str) -> list[dict[str, str]]:
    lines = (DATA / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def open_index(
    name: str, cache_dir: Path | None, tmp: str, headers: str = "off", embedder: str = "minilm"
) -> Index:
    """The set's corpus ingested with the defaults (and chunk ``headers``, the chunking's
    ``context_headers``, and the ``embedder``, each in an index of their own); re-ingesting an
    unchanged cache is a no-op."""
    suffix = "" if headers == "off" else f"-headers-{headers}"
    suffix += "" if embedder == "minilm" else f"-{embedder}"
    index = Index((cache_dir or Path(tmp)) / f"{name}-index{suffix}", embedder=embedder)
    corpus = (DATA / name / "corpus").resolve()
    options = {} if headers == "off" else {"context_headers": headers}
    index.ingest(str(corpus), base=corpus, chunking=ChunkingConfig(DEFAULT_CHUNKER, options))
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="name", default="docs-qa", choices=["docs-qa", "handbook"])
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), default=None)
    parser.add_argument("--split", choices=["dev", "test"], action="append", default=None)
    parser.add_argument("--show", action="store_true", help="print each dev miss at 1")
    parser.add_argument(
        "--headers",
        choices=["off", "keywords", "embedding", "both"],
        default="off",
        help="the chunking's context_headers (an index of its own in --cache-dir)",
    )
    parser.add_argument("--embedder", default="minilm", help="the index's embedder spec")
    parser.add_argument(
        "--sweep",
        type=float,
        nargs="+",
        metavar="WEIGHT",
        help="instead: passage_first's heading_weight x coverage_weight over these values, dev",
    )
    args = parser.parse_args()
    rows = [r for r in questions(args.name) if r["evidence"]]
    variants = args.variant or list(VARIANTS)
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_index(args.name, args.cache_dir, tmp, args.headers, args.embedder) as index,
    ):
        if args.sweep:
            _sweep(index, [r for r in rows if r["split"] == "dev"], args.sweep)
            return
        print(
            f"{args.name}: {len(rows)} answerable questions, hybrid, top 10, headers "
            f"{args.headers}, embedder {args.embedder}"
        )
        print(f"{'variant':<12} {'split':<5} {'evidence@1':>16} {'evidence@5':>16} {'ms p50':>8}")
        for variant in variants:
            settings = VARIANTS[variant]
            splits = args.split or ["dev", "test"]
            chosen_rows = [r for r in rows if r["split"] in splits]
            index.search(chosen_rows[0]["question"], top_k=10, **settings)  # loads the models
            ranks: dict[str, int | None] = {}
            took: list[float] = []
            for row in chosen_rows:
                start = time.perf_counter()
                ranks[row["id"]] = _rank(index, row, settings, args.show)
                took.append((time.perf_counter() - start) * 1000)
            p50 = statistics.median(took)
            for split in splits:
                chosen = [ranks[r["id"]] for r in rows if r["split"] == split]
                print(
                    f"{variant:<12} {split:<5} {_rate(chosen, 1):>16} {_rate(chosen, 5):>16} "
                    f"{p50:>8.0f}"
                )


def _sweep(index: Index, rows: list[dict[str, str]], weights: list[float]) -> None:
    """Every weight pair on the same fused candidates (searched once per question): the 20 that
    a top-10 hybrid search fuses (its arm depth), reordered, then cut to 10."""
    retrieved = [
        (row, index.search(row["question"], top_k=20, arm_depth=20, **OFF)) for row in rows
    ]
    print(f"dev, {len(rows)} questions: heading_weight coverage_weight evidence@1 evidence@5")
    for heading in weights:
        for coverage in weights:
            step = PassageFirst(heading, coverage)
            ranks = [
                _position(row, step.process(row["question"], hits)[:10]) for row, hits in retrieved
            ]
            print(f"  {heading:<6g} {coverage:<6g} {_rate(ranks, 1):>14} {_rate(ranks, 5):>14}")


def _position(row: dict[str, str], hits: Sequence[Hit]) -> int | None:
    evidence = flat(row["evidence"])
    return next((n for n, h in enumerate(hits, start=1) if evidence in flat(h.text)), None)


def _rank(index: Index, row: dict[str, str], settings: dict[str, Any], show: bool) -> int | None:
    """The position (from 1) of the first hit holding the evidence, or None."""
    hits = index.search(row["question"], top_k=10, **settings)
    rank = _position(row, hits)
    if show and rank != 1 and row["split"] == "dev":
        first = f"{hits[0].source} {hits[0].chunk.metadata.get('breadcrumb')}" if hits else "-"
        print(f"  {row['id']} rank {rank}: {row['question']}  [first: {first}]")
    return rank


def _rate(ranks: list[int | None], k: int) -> str:
    hit = sum(1 for r in ranks if r is not None and r <= k)
    return f"{hit / len(ranks):.3f} ({hit}/{len(ranks)})" if ranks else "-"


if __name__ == "__main__":
    main()
