"""How many of a question's words its evidence sentence repeats, per paraphrased set, and
whether every row of the sets still fits its frozen corpus.

    .venv/bin/python benchmarks/paraphrase_overlap.py [--show]

For each answerable question of ``benchmarks/data/paraphrased/*/questions.jsonl``, the overlap
is the share of the question's content words (stemmed as `ragwright.terms.content_words`
stems them: lower-cased, plural ``s`` dropped, cut to five letters, question words left out)
that the evidence sentence holds. A set written in the documents' own words scores near 1; the
questions were written from a one-line summary of each fact, in everyday words, so they
should score low. Printed per set and split: the mean, the median, and the share of
questions at 0 and at 0.5 or more.

It also checks each row, and exits 1 naming the bad ones: the evidence occurs in the corpus
(whitespace-normalized; in ``source`` when the row names one), the answer key occurs in the
evidence (case-folded), the ids are unique and the split is ``dev`` or ``test``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from ragwright.terms import content_words

DATA = Path(__file__).parent / "data" / "paraphrased"
SETS = ("docs", "handbook")


def flat(text: str) -> str:
    return " ".join(text.split())


def load(name: str) -> list[dict]:
    lines = (DATA / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def overlap(question: str, evidence: str) -> float:
    """The share of ``question``'s content words that ``evidence`` holds (0 with none)."""
    asked = content_words(question)
    return len(asked & content_words(evidence)) / len(asked) if asked else 0.0


def problems(name: str, rows: list[dict]) -> list[str]:
    corpus = DATA / name / "corpus"
    texts = {
        p.relative_to(corpus).as_posix(): flat(p.read_text("utf-8")) for p in corpus.rglob("*.md")
    }
    found, seen = [], set()
    for row in rows:
        if row["id"] in seen:
            found.append(f"{row['id']}: duplicate id")
        seen.add(row["id"])
        if row["split"] not in ("dev", "test"):
            found.append(f"{row['id']}: split {row['split']!r}")
        if row["kind"] == "unanswerable":
            continue
        evidence = flat(row["evidence"])
        where = [row["source"]] if row.get("source") else list(texts)
        if not any(evidence in texts.get(source, "") for source in where):
            found.append(f"{row['id']}: evidence not in {where if row.get('source') else name}")
        if row["answer"].lower() not in evidence.lower():
            found.append(f"{row['id']}: answer {row['answer']!r} not in its evidence")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="each question's overlap")
    args = parser.parse_args()
    bad: list[str] = []
    print(f"{'set':<9} {'split':<5} {'n':>3} {'mean':>6} {'median':>7} {'at 0':>6} {'>=0.5':>6}")
    for name in SETS:
        rows = load(name)
        bad += problems(name, rows)
        for split in ("dev", "test"):
            answerable = [r for r in rows if r["split"] == split and r["evidence"]]
            shares = [overlap(r["question"], r["evidence"]) for r in answerable]
            zero = sum(s == 0 for s in shares) / len(shares)
            high = sum(s >= 0.5 for s in shares) / len(shares)
            print(
                f"{name:<9} {split:<5} {len(shares):>3} {statistics.mean(shares):>6.3f} "
                f"{statistics.median(shares):>7.3f} {zero:>6.2f} {high:>6.2f}"
            )
            if args.show:
                for row, share in zip(answerable, shares, strict=True):
                    print(f"    {share:.2f} {row['id']} {row['question']}")
    for line in bad:
        print(f"BAD {line}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
