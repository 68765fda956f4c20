"""HotpotQA dev500: how often the extractive answer holds the gold answer string.

    nice .venv/bin/python benchmarks/hotpot_answers.py --cache-dir /tmp/quality-hotpot \
        [--questions START:END] [--limit N] [--variant model --variant hop]

For each of the 420 questions whose answer is not yes/no, ``Index.ask`` (the default hybrid
search, top 5, and the extractive engine: what ``ragwright ask`` runs) answers, and the answer
text is checked for the gold answer (case-folded, whitespace-normalized). The index is the eval
index cache of ``ragwright eval`` (default configuration), so embeddings are computed once:
pass the same ``--cache-dir`` as to ``ragwright eval``. Beside the answer rate it prints how
often the gold answer is anywhere in the top-5 chunks (the ceiling for a quoting engine) and
the abstention rate. ``--variant NAME`` (repeatable) measures answer_quality.py's variants in
the same run (``before``: the extractive answer and search as before issue 16; ``after``: the
second round's defaults; ``quantities``: the quantity rule; ``quoted``: the fourth round's;
``model``: the cross-encoder's choice, one hop; ``hop``: the default, with the second hop; what
runs when no ``--variant`` is given), ``--variant SENTENCES:GAP`` other ``max_sentences`` /
``max_gap`` settings of the default, ``--variant KEY=VALUE,...`` other fields of the default
(``title_context=true,answer_type_weight=2``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from answer_quality import VARIANTS, ask
from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.quantities import asks_for_quantity
from ragwright.evaluation import EvalConfig, build_or_reuse_index, load_dataset
from ragwright.evaluation.dataset import EvalDataset

DATASET = Path("/work/shared/datasets/hotpotqa-dev500")


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def gold_answers(dataset: Path) -> dict[str, list[str]]:
    """Question id to its answer strings, for the questions not answered yes or no."""
    answers: dict[str, list[str]] = {}
    for line in (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        golds = [_flat(a) for a in row["metadata"]["answers"]]
        if not any(g in ("yes", "no") for g in golds):
            answers[row["_id"]] = golds
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--questions", default=None, metavar="START:END", help="only these of the 420 (0-based)"
    )
    parser.add_argument("--variant", action="append", default=[], metavar="SENTENCES:GAP")
    parser.add_argument(
        "--quantity-questions",
        action="store_true",
        help="only the questions that ask for a number (where the quantity rule acts: on the "
        "others ``after`` and ``quantities`` answer alike)",
    )
    args = parser.parse_args()
    variants: dict[str, ExtractiveOptions | str] = {}
    for variant in args.variant or ["hop"]:  # hop: the default engine
        if variant in VARIANTS:
            variants[variant] = variant
            continue
        if "=" in variant:  # fields of the default: title_context=true,answer_type_weight=2
            variants[variant] = _fields(variant)
            continue
        sentences, gap = variant.split(":")
        variants[variant] = ExtractiveOptions(max_sentences=int(sentences), max_gap=float(gap))
    data = load_dataset(args.dataset, "test")
    golds = gold_answers(args.dataset)
    query_ids = [q for q in data.query_ids if q in golds]
    if args.questions:
        start, end = (int(n) if n else None for n in args.questions.split(":"))
        query_ids = query_ids[start:end]
    query_ids = query_ids[: args.limit]
    if args.quantity_questions:
        query_ids = [q for q in query_ids if asks_for_quantity(data.data.queries[q])]
    print(f"HotpotQA dev500: {len(query_ids)} non-yes/no questions, top {args.top_k} hits")
    with build_or_reuse_index(data, EvalConfig(), args.cache_dir) as cached:
        for name, options in variants.items():
            _measure(name, cached.index, data, golds, query_ids, args.top_k, options)


def _fields(spec: str) -> ExtractiveOptions:
    """The default `ExtractiveOptions` with ``key=value,...`` fields changed."""
    values: dict[str, object] = {}
    for field in filter(None, spec.split(",")):
        key, _, value = (part.strip() for part in field.partition("="))
        lowered = value.lower()
        if lowered in ("true", "false"):
            values[key] = lowered == "true"
        else:
            values[key] = int(value) if value.isdigit() else float(value)
    return dataclasses.replace(ExtractiveOptions(), **values)  # type: ignore[arg-type]


def _measure(
    name: str,
    index: Index,
    data: EvalDataset,
    golds: dict[str, list[str]],
    query_ids: list[str],
    top_k: int,
    options: ExtractiveOptions | str,
) -> None:
    contains = in_context = abstained = words = 0
    for query_id in query_ids:
        question = data.data.queries[query_id]
        if isinstance(options, str):
            answer = ask(index, question, top_k, options)
        else:
            answer = index.ask(question, top_k=top_k, options=options)
        text, context = _flat(answer.text), _flat(" ".join(h.text for h in answer.hits))
        contains += any(g in text for g in golds[query_id])
        in_context += any(g in context for g in golds[query_id])
        abstained += not answer.found
        words += len(text.split())
    n = len(query_ids)
    print(
        f"{name:<10} answer holds the gold answer {contains / n:.3f} ({contains}/{n}); "
        f"gold in the top-{top_k} chunks {in_context / n:.3f}; abstained {abstained / n:.3f} "
        f"({abstained}); {words / n:.1f} words per answer",
        flush=True,
    )


if __name__ == "__main__":
    main()
