"""Entity precision of the offline extractor on a labelled sample (issue 33, item 4).

    .venv/bin/python benchmarks/entity_precision.py [--split test] [--extractor spacy]

The sample (``benchmarks/data/entity_precision/``): 260 entities, each one mention drawn at
random among the distinct entity keys the spaCy extractor (version 2) found in the
repository's ``docs/`` (130, "technical") and in 400 HotpotQA dev500 paragraphs (130,
"prose"), with the chunk it was found in (``chunks.json``, frozen: docs change). Each row is
labelled by hand: ``ok`` with the types that are right for it in that context, ``code`` (a
code identifier) or ``junk``. Even row numbers are ``dev`` (rules were tuned on them), odd
ones ``test`` (report these).

The current extractor re-reads the sampled chunks. A row is *kept* when it still yields a
mention overlapping the sampled span; a kept row is *right* when it is ``ok`` and its type is
one of the labelled types, or ``NAME`` (an untyped name: a type the context contradicted was
taken away rather than guessed). Precision is right / kept; "real kept" is how many ``ok``
rows survive (what hygiene cost).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import defaultdict
from pathlib import Path

from ragwright.graph.registry import create_extractor
from ragwright.models import Chunk

DATA = Path(__file__).resolve().parent / "data" / "entity_precision"
UNTYPED = "NAME"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=("dev", "test", "all"), default="test")
    parser.add_argument("--extractor", default="spacy")
    parser.add_argument("--show", action="store_true", help="print every row's outcome")
    args = parser.parse_args()
    texts: dict[str, str] = json.loads((DATA / "chunks.json").read_text(encoding="utf-8"))
    with (DATA / "entities.tsv").open(encoding="utf-8", newline="") as lines:
        rows = [r for r in csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)]
    rows = [r for r in rows if args.split == "all" or r["split"] == args.split]
    chunks = [Chunk(cid, "sample", 0, text, 0, len(text)) for cid, text in sorted(texts.items())]
    extractor = create_extractor(args.extractor)
    found = {f.chunk_id: f.mentions for f in extractor.extract(chunks)}
    print(f"extractor {extractor.id}, split {args.split}")
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        start, end = int(row["start"]), int(row["end"])
        hit = next((m for m in found[row["chunk"]] if m.start < end and start < m.end), None)
        counts = tally[row["half"]]
        counts["rows"] += 1
        real = row["verdict"] == "ok"
        counts["real"] += real
        if hit is None:
            outcome = "dropped"
        else:
            counts["kept"] += 1
            right = real and (hit.label == UNTYPED or hit.label in row["types"].split(","))
            counts["right"] += right
            counts["real kept"] += real
            counts["untyped"] += hit.label == UNTYPED
            outcome = f"{'RIGHT' if right else 'wrong'} {hit.label}"
        if args.show:
            print(f"  {row['id']} {row['verdict']:<4} {outcome:<20} {json.loads(row['text'])!r}")
    for half in ("technical", "prose"):
        c = tally[half]
        if not c["rows"]:
            continue
        precision = c["right"] / c["kept"] if c["kept"] else 0.0
        print(
            f"{half:<9}  precision {precision:.3f} ({c['right']}/{c['kept']} kept right; "
            f"{c['rows']} rows, {c['real']} real names, {c['real kept']} of them kept, "
            f"{c['untyped']} kept untyped)"
        )


if __name__ == "__main__":
    main()
