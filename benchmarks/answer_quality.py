"""A held-out question set (``--set handbook`` or ``docs-qa``): does search put the evidence
first, and does the extractive answer hold the answer (or abstain when the corpus cannot
answer)?

    .venv/bin/python benchmarks/answer_quality.py [--set docs-qa] [--split test] [--top-k 5]
        [--variant before --variant after] [--cache-dir DIR] [--show]

Ingests the set's ``corpus/`` with the default configuration (what ``ragwright ingest`` does;
into ``--cache-dir`` when given), then for each question of the split runs ``Index.search`` and
``Index.ask`` (the extractive engine, offline) as ``ragwright search`` and ``ragwright ask``
do. Each ``--variant`` is measured in the same run (``hop``, the default engine, when none is
given): ``before`` the extractive answer without what issue 16 added; ``lists`` adds a list
quoted whole with its introduction, ``names`` the abstention on a name no passage mentions,
``after`` the ``passage_first`` step in search (the second round's default), ``quantities`` the
quantity rule (`ragwright.answers.quantities`), ``money`` a price that must be a sum of money,
``quoted`` the abstention when no sentence to be quoted mentions the question's names,
``covered`` when their passages hold under half of the question's content words, ``words`` (the
fifth round's) a sentence's own share of them added to its score. ``--headers`` picks the chunking's
context headers. Figures:

- evidence@1 / evidence@5: the evidence sentence lies inside the first hit / one of the first
  five (answerable questions);
- contains: the answer text holds the gold answer string (answerable questions, case-folded);
- stale: the answer also gives the outdated value of an older document (``newer`` questions);
- abstains: the answer is "Not found in the sources." (unanswerable questions), and beside it
  how often an answerable question got that answer.

Tune on ``--split dev``; report ``--split test``. See the set's README under benchmarks/data/.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from collections import defaultdict
from pathlib import Path

from evidence import open_index, questions
from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.models import Answer, Hit, final_answer
from ragwright.pipeline.search.request import PassageWeights

#: The cross-encoder chooses and refuses quotes (issue 32): the default now.
_MODEL = ExtractiveOptions()
#: The fifth round's answerer, by embedding and word overlap, without ``min_quoted_coverage``
#: (issue 32 removed the rule, so ``covered`` and ``quoted`` now answer alike).
_NEW = dataclasses.replace(_MODEL, cross_encoder=False)
#: Before a sentence's own share of the question's words counted in its score.
_COVERED = dataclasses.replace(_NEW, word_weight=0.0)
#: The fourth round's answerer: before the quoted passages had to hold the question's words.
_ROUND4 = _COVERED
#: The third round's answerer: before the price and quoted-name rules.
_ROUND3 = dataclasses.replace(_ROUND4, require_money=False, require_quoted_names=False)
#: The second round's answerer: before the quantity rule.
_ROUND2 = dataclasses.replace(_ROUND3, require_quantity=False)
_OLD = dataclasses.replace(_ROUND2, max_list_chars=0, require_names=False)
#: What issue 16 added, step by step: (extractive options, passage_first in search).
VARIANTS: dict[str, tuple[ExtractiveOptions, bool]] = {
    "before": (_OLD, False),
    "lists": (dataclasses.replace(_OLD, max_list_chars=_NEW.max_list_chars), False),
    "names": (_ROUND2, False),
    "after": (_ROUND2, True),
    "quantities": (_ROUND3, True),
    "money": (dataclasses.replace(_ROUND3, require_money=True), True),
    "quoted": (_ROUND4, True),
    "covered": (_COVERED, True),
    "words": (_NEW, True),
    "model": (dataclasses.replace(_MODEL, bridge_relevance=1.0), True),  # one hop
    "hop": (_MODEL, True),  # the default now: the second hop
}


def ask(index: Index, question: str, top_k: int, variant: str) -> Answer:
    """``Index.ask`` as the variant says; without passage_first, the same retrieval (the
    planner's mode) with the step switched off."""
    options, passage = VARIANTS[variant]
    if passage:
        return index.ask(question, top_k=top_k, options=options)
    mode = index.searching.plan(question).mode

    def retrieve(query: str) -> list[Hit]:
        return index.search(query, top_k=top_k, mode=mode, passage=PassageWeights(0.0))

    return final_answer(index.answers.answer_stream(question, retrieve, options=options))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _rate(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="name", default="handbook", choices=["docs-qa", "handbook"])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--top-k", type=int, default=5, help="hits the answer is written from")
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), default=None)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--show", action="store_true", help="print each question's answer")
    parser.add_argument(
        "--headers", choices=["off", "keywords", "embedding", "both"], default="off"
    )
    args = parser.parse_args()
    rows = [r for r in questions(args.name) if args.split in ("all", r["split"])]
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_index(args.name, args.cache_dir, tmp, args.headers) as index,
    ):
        for variant in args.variant or ["hop"]:  # hop: the default engine
            figures: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
            for row in rows:
                hits = index.search(row["question"], top_k=max(5, args.top_k))
                answer = ask(index, row["question"], args.top_k, variant)
                _score(row, [_flat(h.text) for h in hits], answer, figures[row["split"]])
                if args.show:
                    print(f"{row['id']} [{row['kind']}] {row['question']}\n    -> {answer.text}")
            for split in sorted(figures):  # per split, even with --split all
                chosen = [r for r in rows if r["split"] == split]
                _report(f"{args.name} {split} {variant}", chosen, args.top_k, figures[split])


def _report(title: str, rows: list[dict], top_k: int, figures: dict[str, list[bool]]) -> None:
    print(f"{title}: {len(rows)} questions, answers from the top {top_k} hits")
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
    if row.get("stale"):
        figures["stale/newer"].append(row["stale"].lower() in text)


if __name__ == "__main__":
    main()
