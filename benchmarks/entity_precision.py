"""Entity precision of the offline extractor on a labelled sample (issue 33, item 4).

    .venv/bin/python benchmarks/entity_precision.py [--split test] [--extractor spacy]

The sample (``benchmarks/data/entity_precision/``): 260 entities, each one mention drawn at
random among the distinct entity keys the spaCy extractor (version 2) found in the
repository's ``docs/`` (130, "technical") and in 400 HotpotQA dev500 paragraphs (130,
"prose"), with the chunk it was found in (``chunks.json``, frozen: docs change). Each row is
labelled by hand: ``ok`` with the types that are right for it in that context, ``code`` (a
code identifier) or ``junk``. Even row numbers are ``dev`` (rules were tuned on them), odd
ones ``test`` (report these). ``dev2`` (ids ``td``/``pd``): 190 more tuning rows, drawn at
random among the distinct keys extractor version 5 *kept* in chunks outside the sample (70 from
``docs/`` cut at headings and every 1,500 characters, 120 from 300 other HotpotQA
paragraphs), so they measure what the extractor keeps now rather than what version 2 found.
``dev3``/``test3`` (ids ``pe``, even/odd): 100 more prose rows drawn the same way among the keys
version 7 kept in 300 further HotpotQA paragraphs.

The current extractor re-reads the sampled chunks. A row is *kept* when it still yields a
mention overlapping the sampled span; a kept row is *right* when it is ``ok`` and its type is
one of the labelled types, or ``NAME`` (an untyped name: a type the context contradicted was
taken away rather than guessed). Precision is right / kept; "real kept" is how many ``ok``
rows survive (what hygiene cost).

``--links``: synonym-link precision instead. ``keys.tsv`` holds every entity key (and its most
mentioned type) of a graph of ``docs/`` and 1,500 HotpotQA paragraphs built with extractor
version 3; ``links.tsv`` 100 of the 2,359 links the linker made over them then, drawn at
random and labelled by hand (1: the two keys name one thing there; split ``dev`` or
``test``), and 80 more (split ``dev2``) drawn among the links the version-5 linker made over
the same keys and not yet labelled, and 80 more (``dev3`` even, ``test2`` odd; ids ``n``)
among the version-6 linker's links not yet labelled, each labelled from the corpus paragraphs
where the shorter key stands alone. The current linker links
the keys afresh (with ``--untyped`` without their types, as before); a labelled link is kept
when it links again. Precision is right / kept among the labelled ones.

The linker also reads which documents each key is mentioned in (``key_documents.json``: the
HotpotQA dev500 paragraph ids and ``docs/`` file names where extractor version 7 found a
mention with that key, all 4,858 paragraphs and ``docs/`` cut every 1,500 characters, frozen;
9,098 of the 9,451 keys are found, the others were cuts of version 3 and have no documents,
which the linker reads as "not known"). ``--no-documents``: link without them, as before.
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
    splits = ("dev", "dev2", "dev3", "test", "test2", "test3", "all")
    parser.add_argument("--split", choices=splits, default="test")
    parser.add_argument("--extractor", default="spacy")
    parser.add_argument("--show", action="store_true", help="print every row's outcome")
    parser.add_argument("--links", action="store_true", help="synonym-link precision")
    parser.add_argument("--untyped", action="store_true", help="link without the types")
    parser.add_argument(
        "--no-documents", action="store_true", help="link without the keys' documents"
    )
    args = parser.parse_args()
    if args.links:
        link_precision(args.split, untyped=args.untyped, documents=not args.no_documents)
        return
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


def link_precision(split: str, *, untyped: bool, documents: bool) -> None:
    from ragwright.graph.synonyms import synonym_links

    with (DATA / "keys.tsv").open(encoding="utf-8", newline="") as lines:
        rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    types = {json.loads(r["key"]): r["type"] for r in rows}
    keys = sorted(types)
    found = json.loads((DATA / "key_documents.json").read_text(encoding="utf-8"))
    mentioned = {key: frozenset(ids) for key, ids in found.items()}

    def in_documents(key: str) -> frozenset[str]:
        return mentioned.get(key, frozenset())

    made = synonym_links(
        keys,
        keys,
        types=None if untyped else types,
        documents=in_documents if documents else None,
    )
    linked = {(a, b) for a, b, _ in made}
    with (DATA / "links.tsv").open(encoding="utf-8", newline="") as lines:
        labelled = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    labelled = [r for r in labelled if split == "all" or r["split"] == split]
    kept = [r for r in labelled if (json.loads(r["source"]), json.loads(r["target"])) in linked]
    right = sum(r["right"] == "1" for r in kept)
    total_right = sum(r["right"] == "1" for r in labelled)
    print(f"{len(keys):,} keys, {len(linked):,} links ({'untyped' if untyped else 'typed'}, "
          f"{'with' if documents else 'without'} documents); split {split}")  # fmt: skip
    print(f"link precision {right / max(1, len(kept)):.3f} ({right}/{len(kept)} kept right; "
          f"{len(labelled)} labelled, {total_right} right, {right} of them kept)")  # fmt: skip


if __name__ == "__main__":
    main()
