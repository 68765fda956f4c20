"""The held-out handbook set: does search put the evidence first, and does the extractive
answer hold the answer (or abstain when the corpus cannot answer)?

    .venv/bin/python benchmarks/answer_quality.py [--split test] [--top-k 5] [--show]

Ingests ``benchmarks/data/handbook/corpus`` with the default configuration (what
``ragwright ingest`` does), then for each question of the split runs ``Index.search`` and
``Index.ask`` (the extractive engine, offline) as ``ragwright search`` and ``ragwright ask``
do. Figures:

- evidence@1 / evidence@5: the evidence sentence lies inside the first hit / one of the first
  five (answerable questions);
- contains: the answer text holds the gold answer string (answerable questions, case-folded);
- stale: the answer also gives the outdated value of an older document (``newer`` questions);
- abstains: the answer is "Not found in the sources." (unanswerable questions), and beside it
  how often an answerable question got that answer.

Tune on ``--split dev``; report ``--split test``. See benchmarks/data/handbook/README.md.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

from ragwright import Index
from ragwright.models import Answer

HANDBOOK = Path(__file__).parent / "data" / "handbook"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _rate(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--top-k", type=int, default=5, help="hits the answer is written from")
    parser.add_argument("--show", action="store_true", help="print each question's answer")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (HANDBOOK / "questions.jsonl").read_text().splitlines()]
    rows = [r for r in rows if args.split in ("all", r["split"])]
    with tempfile.TemporaryDirectory() as tmp, Index(Path(tmp) / "index") as index:
        index.ingest(HANDBOOK / "corpus")
        figures: dict[str, list[bool]] = defaultdict(list)
        for row in rows:
            hits = index.search(row["question"], top_k=max(5, args.top_k))
            answer = index.ask(row["question"], top_k=args.top_k)
            _score(row, [_flat(h.text) for h in hits], answer, figures)
            if args.show:
                print(f"{row['id']} [{row['kind']}] {row['question']}\n    -> {answer.text}")
    print(f"handbook {args.split}: {len(rows)} questions, answers from the top {args.top_k} hits")
    for name in (
        "evidence@1",
        "evidence@5",
        "contains",
        "contains/lookup",
        "contains/newer",
        "contains/multi",
        "stale/newer",
        "abstains/unanswerable",
        "abstains/answerable",
    ):
        print(f"{name:<24} {_rate(figures[name])}")


def _score(row: dict, hits: list[str], answer: Answer, figures: dict[str, list[bool]]) -> None:
    text = answer.text.lower()
    if row["kind"] == "unanswerable":
        figures["abstains/unanswerable"].append(not answer.found)
        return
    evidence = _flat(row["evidence"])
    figures["evidence@1"].append(bool(hits) and evidence in hits[0])
    figures["evidence@5"].append(any(evidence in hit for hit in hits[:5]))
    contains = row["answer"].lower() in text
    figures["contains"].append(contains)
    figures[f"contains/{row['kind']}"].append(contains)
    figures["abstains/answerable"].append(not answer.found)
    if "stale" in row:
        figures["stale/newer"].append(row["stale"].lower() in text)


if __name__ == "__main__":
    main()
