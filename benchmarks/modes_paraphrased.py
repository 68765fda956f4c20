"""Hybrid, graph and auto mode on the paraphrased product-documentation sets: is ``search
--mode auto`` (or ``--mode graph``) ever worse than hybrid on pages with Markdown headings?

    nice .venv/bin/python benchmarks/modes_paraphrased.py --cache-dir DIR [--set docs
        --set handbook] [--split dev|test|all] [--no-front-matter] [--show]

Each set's ``corpus/`` (``benchmarks/data/paraphrased``) is ingested with the defaults as
`answers_paraphrased.py` ingests it (the same ``paraphrased-NAME`` directory, so its cache
serves both), then its entity graph is built with the default offline extractor (spaCy), as
``ragwright graph build`` does (resumable: a second run extracts nothing). Every answerable
question of the split is searched with ``Index.search`` (top 5) in each mode, hybrid first as
the baseline, in one process. Figures per set, split and mode: evidence@1 / evidence@5 (the
first hit / one of the first five holds the evidence quote, whitespace-normalized), and how
many questions moved against hybrid at @1 and @5 (gained / lost). For auto: how many questions
the planner sent to graph search (``Searching.plan``: the mode that runs), how many of each
mode's rankings differ from hybrid's, and how many of its searches ran the walk (graph mode's
gate found an entity to bridge: `ragwright.graph.bridges`). ``--show`` prints each question
whose first five hits differ from hybrid's, with every mode's first lines.

``--no-front-matter`` ingests a copy of each corpus with its YAML front matter cut
(``paraphrased-NAME-plain``): the handbook's pages then open with their ``# Title`` heading,
as graph mode's bridge rules read a title (the first line of a document's first chunk), where
with front matter their first chunk opens with ``---`` and is about nothing.
"""

from __future__ import annotations

import argparse
import re
import shutil
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from answers_paraphrased import open_index
from paraphrase_overlap import DATA, SETS, flat, load
from ragwright import Index, tracing
from ragwright.chunkers import DEFAULT_CHUNKER
from ragwright.index import ChunkingConfig
from ragwright.models import Hit

MODES = ("hybrid", "graph", "auto")
TOP_K = 5
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n+", re.DOTALL)


class WalkCounter:
    """A tracer that counts graph walks (the gate found something to bridge)."""

    def __init__(self) -> None:
        self.walks = 0

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, tracing.Attribute]) -> Iterator[WalkCounter]:
        self.walks += name == tracing.GRAPH_WALK
        yield self

    def set(self, name: str, value: tracing.Attribute) -> None:
        pass  # the span's attributes: not needed for a count


@dataclass
class Tally:
    """One mode's figures on one split."""

    at1: list[bool] = field(default_factory=list)
    at5: list[bool] = field(default_factory=list)
    changed: int = 0  # rankings (first five) that differ from hybrid's
    walked: int = 0  # searches that ran the graph walk


def held(evidence: str, hits: Sequence[Hit]) -> tuple[bool, bool]:
    texts = [flat(hit.text) for hit in hits[:TOP_K]]
    return bool(texts) and evidence in texts[0], any(evidence in text for text in texts)


def headline(hit: Hit) -> str:
    return " ".join(hit.chunk.text.strip().split("\n", 1)[0].split())[:60]


def measure(
    index: Index, rows: Sequence[dict[str, str]], show: bool
) -> tuple[dict[str, Tally], Counter[str]]:
    tallies = {mode: Tally() for mode in MODES}
    planned: Counter[str] = Counter()
    for row in rows:
        evidence = flat(row["evidence"])
        ranked = {}
        for mode in MODES:
            counter = WalkCounter()
            with tracing.tracing(counter):
                ranked[mode] = index.search(row["question"], top_k=TOP_K, mode=mode)
            tallies[mode].walked += counter.walks
        planned[index.searching.plan(row["question"]).mode] += 1
        baseline = [hit.chunk.id for hit in ranked["hybrid"]]
        for mode, hits in ranked.items():
            at1, at5 = held(evidence, hits)
            tallies[mode].at1.append(at1)
            tallies[mode].at5.append(at5)
            tallies[mode].changed += [hit.chunk.id for hit in hits] != baseline
        if show and any([h.chunk.id for h in hits] != baseline for hits in ranked.values()):
            print(f"  {row['id']} {row['question']}")
            for mode, hits in ranked.items():
                marks = "".join("*" if evidence in flat(h.text) else "." for h in hits)
                print(f"    {mode:<6} {marks:<5} " + " | ".join(headline(h) for h in hits[:3]))
    return tallies, planned


def moved(mode: Tally, hybrid: Tally, at: str) -> str:
    ours, base = getattr(mode, at), getattr(hybrid, at)
    gained = sum(o and not b for o, b in zip(ours, base, strict=True))
    lost = sum(b and not o for o, b in zip(ours, base, strict=True))
    return f"+{gained}/-{lost}"


def report(title: str, tallies: dict[str, Tally], planned: Counter[str]) -> None:
    n = len(tallies["hybrid"].at1)
    print(f"\n{title}: {n} answerable questions; auto ran {dict(planned)}")
    print(
        f"{'mode':<7} {'evidence@1':>14} {'evidence@5':>14} {'@1 vs hybrid':>13} "
        f"{'@5 vs hybrid':>13} {'changed':>8} {'walked':>7}"
    )
    hybrid = tallies["hybrid"]
    for mode, tally in tallies.items():
        cells = [f"{sum(v) / n:.3f} ({sum(v):>2})" for v in (tally.at1, tally.at5)]
        print(
            f"{mode:<7} {cells[0]:>14} {cells[1]:>14} {moved(tally, hybrid, 'at1'):>13} "
            f"{moved(tally, hybrid, 'at5'):>13} {tally.changed:>8} {tally.walked:>7}",
            flush=True,
        )


def open_plain(name: str, root: Path) -> Index:
    """The set's corpus, front matter cut, ingested with the defaults (`open_index`'s)."""
    corpus = root / f"corpus-{name}-plain"
    shutil.rmtree(corpus, ignore_errors=True)
    source = DATA / name / "corpus"
    for path in source.rglob("*.md"):
        target = corpus / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_FRONT_MATTER.sub("", path.read_text("utf-8"), count=1), "utf-8")
    index = Index(root / f"paraphrased-{name}-plain")
    index.ingest(str(corpus), base=corpus, chunking=ChunkingConfig(DEFAULT_CHUNKER, {}))
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="sets", action="append", choices=SETS, default=None)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--no-front-matter", action="store_true", help="see the docstring")
    parser.add_argument("--show", action="store_true", help="each question whose hits moved")
    args = parser.parse_args()
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    for name in args.sets or list(SETS):
        opened = open_plain if args.no_front_matter else open_index
        with opened(name, args.cache_dir) as index:
            built = index.graph.build("spacy")
            stats = index.graph.stats()
            print(
                f"{name}: spaCy graph, {stats.entities} entities, {stats.edges} edges "
                f"({built.chunks_extracted} chunks extracted in this run)"
            )
            for split in splits:
                rows = [r for r in load(name) if r["split"] == split and r["evidence"]]
                tallies, planned = measure(index, rows, args.show)
                plain = ", front matter cut" if args.no_front_matter else ""
                report(f"{name} {split}{plain}", tallies, planned)


if __name__ == "__main__":
    main()
