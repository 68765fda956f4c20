"""Builds benchmarks/data/routing/questions.jsonl, the labelled routing set.

    python benchmarks/routing_set.py [--hotpot DIR] [--scifact DIR]

Labels come from the data, never from a planner:

- HotpotQA dev500 (its files carry no question type): ``comparison`` when the answer is yes/no
  or names one of two options the question gives ("…, A or B?"), else ``bridge``.
- SciFact claims: ``lookup`` (train claims 0–99 as dev, the 300 test claims as test).
- The handbook's ``lookup`` questions (their own dev/test split).
- ``aggregate``: the questions of data/routing/aggregate.txt, written over the handbook corpus
  before any tuning.

Split: HotpotQA and the aggregates alternate dev/test within each type, in file order.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "routing"
SHARED = ROOT.parent.parent / "shared" / "datasets"
_WORD = re.compile(r"\w+")


def hotpot_type(question: str, answer: str) -> str:
    text, wanted = question.lower(), answer.strip().lower()
    if wanted in ("yes", "no"):
        return "comparison"
    if " or " not in text:
        return "bridge"
    options = text.rsplit(",", 1)[-1] if "," in text else text
    answer_words = set(_WORD.findall(wanted))
    return "comparison" if answer_words & set(_WORD.findall(options)) else "bridge"


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def build(hotpot: Path, scifact: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    seen: Counter[str] = Counter()

    def add(qid: str, question: str, kind: str, source: str, split: str | None = None) -> None:
        if split is None:
            split = "dev" if seen[f"{source}:{kind}"] % 2 == 0 else "test"
        seen[f"{source}:{kind}"] += 1
        rows.append(
            {"id": qid, "question": question, "type": kind, "source": source, "split": split}
        )

    for query in _jsonl(hotpot / "queries.jsonl"):
        meta = query["metadata"]
        assert isinstance(meta, dict)
        kind = hotpot_type(str(query["text"]), str(meta["answer"]))
        add(str(query["_id"]), str(query["text"]), kind, "hotpotqa")
    claims = {str(q["_id"]): str(q["text"]) for q in _jsonl(scifact / "queries.jsonl")}
    for name, split, limit in (("train", "dev", 100), ("test", "test", None)):
        lines = (scifact / "qrels" / f"{name}.tsv").read_text("utf-8").splitlines()[1:]
        ids = list(dict.fromkeys(line.split("\t")[0] for line in lines))
        for qid in ids[:limit]:
            add(qid, claims[qid], "lookup", "scifact", split)
    for question in _jsonl(ROOT / "data" / "handbook" / "questions.jsonl"):
        if question["kind"] == "lookup":
            add(
                str(question["id"]),
                str(question["question"]),
                "lookup",
                "handbook",
                str(question["split"]),
            )
    lines = (DATA / "aggregate.txt").read_text("utf-8").splitlines()
    for number, question in enumerate(line for line in lines if line.strip()):
        add(f"agg-{number + 1:02d}", question, "aggregate", "handbook")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hotpot", type=Path, default=SHARED / "hotpotqa-dev500")
    parser.add_argument("--scifact", type=Path, default=SHARED / "scifact")
    args = parser.parse_args()
    rows = build(args.hotpot, args.scifact)
    out = DATA / "questions.jsonl"
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    counts = Counter((str(row["type"]), str(row["split"])) for row in rows)
    print(f"{len(rows)} questions -> {out}")
    for (kind, split), count in sorted(counts.items()):
        print(f"  {kind:<11} {split:<5} {count}")


if __name__ == "__main__":
    main()
