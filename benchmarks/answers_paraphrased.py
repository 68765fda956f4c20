"""Paraphrased questions (``benchmarks/data/paraphrased``): does ``ask`` read the passage that
answers, does its answer hold the answer, and does it refuse what the corpus cannot answer?

    nice .venv/bin/python benchmarks/answers_paraphrased.py [--set docs --set handbook]
        [--split dev|test|all] [--variant NAME ...] [--cache-dir DIR] [--show]

Each set's ``corpus/`` is ingested with the default configuration (the offline default
embedder; into ``--cache-dir`` when given, so a second run embeds nothing), then every question
of the split is asked with ``Index.ask`` (top 5, the extractive engine: what ``ragwright ask``
runs). Each ``--variant`` (see `variant`) is measured in the same run, on the same index.
Figures, per set and split:

- evidence@1 / evidence@5: the hits ``ask`` read hold the evidence (whitespace-normalized)
  in the first / one of the first five (answerable questions);
- cite@1: the chunk of the answer's first quote holds the evidence (the passage it chose);
- contains: the answer text holds the answer key (case-folded; answerable questions), also
  per kind; stale: a ``newer`` question's answer gives the superseded value too;
- abstains: the answer is "not found" (unanswerable questions), and beside it how often an
  answerable question got it;
- ask p50 / p90 ms: wall time of ``Index.ask`` (after one warm-up question).

Tune on ``--split dev``; ``test`` is run before and after, never to choose anything. The
questions' word overlap with their evidence: ``benchmarks/paraphrase_overlap.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from paraphrase_overlap import DATA, SETS, flat, load, overlap
from ragwright import Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.chunkers import DEFAULT_CHUNKER
from ragwright.index import ChunkingConfig
from ragwright.models import Answer

#: How each variant asks: a function of the index and the question.
Asker = Callable[[Index, str], Answer]


def variant(spec: str) -> Asker:
    """``default`` (``Index.ask`` as it is: the cross-encoder chooses and refuses quotes), or
    ``model`` / ``embedder`` (the extractive engine with ``cross_encoder`` true / false) with
    ``:key=value,...`` fields of `ExtractiveOptions` (``model:min_relevance=0.01``)."""
    name, _, fields = spec.partition(":")
    if name == "default" and not fields:
        return lambda index, question: index.ask(question, top_k=5)
    if name not in ("model", "embedder"):
        raise SystemExit(f"unknown variant {spec!r}: default, model:... or embedder:...")
    values: dict[str, object] = {"cross_encoder": name == "model"}
    for field in filter(None, fields.split(",")):
        key, _, value = (part.strip() for part in field.partition("="))
        if value.lower() in ("true", "false"):
            values[key] = value.lower() == "true"
        else:
            values[key] = int(value) if key in ("max_sentences", "rerank_depth") else float(value)
    options = dataclasses.replace(ExtractiveOptions(), **values)  # type: ignore[arg-type]
    return lambda index, question: index.ask(question, top_k=5, options=options)


FIGURES = (
    "evidence@1",
    "evidence@5",
    "cite@1",
    "contains",
    "contains/lookup",
    "contains/newer",
    "contains/multi",
    "stale/newer",
    "abstains/unanswerable",
    "abstains/answerable",
)


def open_index(name: str, root: Path) -> Index:
    """The set's corpus ingested with the defaults; an unchanged cache is a no-op."""
    index = Index(root / f"paraphrased-{name}")
    corpus = (DATA / name / "corpus").resolve()
    index.ingest(str(corpus), base=corpus, chunking=ChunkingConfig(DEFAULT_CHUNKER, {}))
    return index


def score(row: dict, answer: Answer, figures: dict[str, list[bool]]) -> None:
    text = answer.text.lower()
    if row["kind"] == "unanswerable":
        figures["abstains/unanswerable"].append(not answer.found)
        return
    evidence = flat(row["evidence"])
    hits = [flat(hit.text) for hit in answer.hits]
    figures["evidence@1"].append(bool(hits) and evidence in hits[0])
    figures["evidence@5"].append(any(evidence in hit for hit in hits[:5]))
    quoted = [c for c in answer.citations if c.number == 1]
    chunk = next((h.text for h in answer.hits if quoted and h.chunk.id == quoted[0].chunk_id), "")
    figures["cite@1"].append(evidence in flat(chunk))
    contains = answer.found and row["answer"].lower() in text
    figures["contains"].append(contains)
    figures[f"contains/{row['kind']}"].append(contains)
    figures["abstains/answerable"].append(not answer.found)
    if row.get("stale"):
        figures["stale/newer"].append(row["stale"].lower() in text)


def rate(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f} ({sum(values)}/{len(values)})" if values else "-"


def measure(index: Index, rows: list[dict], asker: Asker, show: bool) -> tuple[dict, list[float]]:
    figures: dict[str, list[bool]] = defaultdict(list)
    millis = []
    asker(index, "warm up: what is this about?")
    for row in rows:
        start = time.perf_counter()
        answer = asker(index, row["question"])
        millis.append((time.perf_counter() - start) * 1000)
        score(row, answer, figures)
        if show:
            print(f"  {row['id']} [{row['kind']}] {row['question']} (key: {row['answer']})")
            print(f"      -> {' '.join(answer.text.split())[:300]}")
    return figures, millis


def report(title: str, rows: list[dict], figures: dict, millis: list[float]) -> None:
    answerable = [r for r in rows if r["evidence"]]
    shares = [overlap(r["question"], r["evidence"]) for r in answerable]
    print(
        f"{title}: {len(answerable)} answerable + {len(rows) - len(answerable)} unanswerable, "
        f"word overlap with the evidence {statistics.mean(shares):.3f}"
    )
    for name in FIGURES:
        print(f"  {name:<24} {rate(figures[name])}")
    ordered = sorted(millis)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    print(f"  {'ask ms p50 / p90':<24} {statistics.median(millis):.1f} / {p90:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="sets", action="append", choices=SETS, default=None)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--variant", action="append", default=None, help="see variant()")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--show", action="store_true", help="print each question's answer")
    args = parser.parse_args()
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    with tempfile.TemporaryDirectory() as tmp:
        root = args.cache_dir or Path(tmp)
        for name in args.sets or list(SETS):
            with open_index(name, root) as index:
                for split in splits:
                    rows = [r for r in load(name) if r["split"] == split]
                    for spec in args.variant or ["default"]:
                        figures, millis = measure(index, rows, variant(spec), args.show)
                        report(f"{name} {split} {spec}", rows, figures, millis)


if __name__ == "__main__":
    main()
