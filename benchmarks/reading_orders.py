"""Where the paraphrased sets' evidence is found, by arm, and which order of the candidates the
cross-encoder should give ``ask``: what each passage is read as (its text alone, after its
headings, its best sentence), how deep it reads, and fused with the search's own order.

    nice .venv/bin/python benchmarks/reading_orders.py --set docs --split dev \
        --cache-dir DIR --scores /tmp/scores-docs.pkl

The index is `answers_paraphrased.py`'s (the same ``--cache-dir`` reuses it). Every (question,
text) logit is kept in ``--scores`` (a pickle this script writes), so a second run, or another
order, reads no passage again. Figures, counts of the answerable questions:

- by arm: the evidence in the first 1 / 5 / 20 / 50 hits of hybrid, BM25 and vector search;
- by order: the evidence in the first 1 / 5 passages ``ask`` would read, and whether the best
  sentence of those 5 (each read after its headings, as the extractive engine reads it) holds
  the answer key (no threshold: what quoting one sentence would give).

Tune on dev only.
"""

from __future__ import annotations

import argparse
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from answers_paraphrased import open_index
from paraphrase_overlap import SETS, flat, load
from ragwright import Index
from ragwright.answers.extractive import ExtractiveAnswerer, ExtractiveOptions
from ragwright.answers.relevance import in_context
from ragwright.models import Hit
from ragwright.rerankers.shipped import ms_marco_cross_encoder
from ragwright.terms import headings

ARMS = ("hybrid", "bm25", "vector")
DEPTHS = (1, 5, 20, 50)


@dataclass
class Passage:
    text: str
    rank: int  # in the hybrid search, from 1
    plain: float  # the cross-encoder's logit of the text alone
    headed: float  # ... after its headings
    sentences: list[tuple[str, float]]  # each sentence and its logit, read after the headings

    @property
    def best_sentence(self) -> float:
        return max((logit for _, logit in self.sentences), default=-20.0)


class Scores:
    """The shipped cross-encoder's logits, kept by (question, text) in a pickle."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept: dict[tuple[str, str], float] = (
            pickle.loads(path.read_bytes()) if path.exists() else {}
        )
        self.model = ms_marco_cross_encoder(threads=1)  # one thread: the machine is shared

    def __call__(self, question: str, texts: list[str]) -> list[float]:
        new = [t for t in dict.fromkeys(texts) if (question, t) not in self.kept]
        if new:
            for text, logit in zip(new, self.model.score(question, new), strict=True):
                self.kept[(question, text)] = float(logit)
        return [self.kept[(question, t)] for t in texts]

    def save(self) -> None:
        self.path.write_bytes(pickle.dumps(self.kept))


def passages(index: Index, question: str, depth: int, scores: Scores) -> list[Passage]:
    engine = ExtractiveAnswerer(embedder=None, options=ExtractiveOptions())  # type: ignore[arg-type]
    made = []
    for rank, hit in enumerate(index.search(question, top_k=depth, mode="hybrid"), 1):
        path = headings(hit.chunk)
        sentences = [c.shown for c in engine._candidates([hit])]  # the engine's own split
        plain, headed = scores(question, [hit.text, in_context(path, hit.text)])
        logits = scores(question, [in_context(path, s) for s in sentences])
        made.append(
            Passage(hit.text, rank, plain, headed, list(zip(sentences, logits, strict=True)))
        )
    return made


#: Each order: how many hits the search returns (top_k, as ``ask`` widens it to the reranker's
#: depth) and the score sorting them (highest first).
ORDERS: dict[str, tuple[int, Callable[[Passage], float]]] = {
    "search (no reranker)": (5, lambda p: -p.rank),
    "text, top 20 (today)": (20, lambda p: p.plain),
    "text, top 10": (10, lambda p: p.plain),
    "text, top 30": (30, lambda p: p.plain),
    "headings + text, top 20": (20, lambda p: p.headed),
    "best sentence, top 20": (20, lambda p: p.best_sentence),
    "best sentence, top 30": (30, lambda p: p.best_sentence),
    "text + best sentence, top 20": (20, lambda p: p.plain + p.best_sentence),
    "max(text, best sentence), top 20": (20, lambda p: max(p.plain, p.best_sentence)),
}
#: Fused with the search's order: 1 / (5 + reranked rank) + FUSED / (5 + search rank).
FUSED = 2.0


def fused(order: list[Passage]) -> list[Passage]:
    place = {id(p): i for i, p in enumerate(order, 1)}
    return sorted(order, key=lambda p: -(1 / (5 + place[id(p)]) + FUSED / (5 + p.rank)))


def found(evidence: str, texts: list[str]) -> int | None:
    return next((i for i, t in enumerate(texts, 1) if evidence in flat(t)), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", dest="name", choices=SETS, default="docs")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--scores", type=Path, required=True)
    args = parser.parse_args()
    rows = [r for r in load(args.name) if r["split"] == args.split and r["evidence"]]
    scores = Scores(args.scores)
    arms = {arm: [0] * len(DEPTHS) for arm in ARMS}
    orders = {name: [0, 0, 0] for name in [*ORDERS, *(f"{o}, fused" for o in list(ORDERS)[1:])]}
    with (
        tempfile.TemporaryDirectory() as tmp,
        open_index(args.name, args.cache_dir or Path(tmp)) as index,
    ):
        for row in rows:
            evidence, key = flat(row["evidence"]), row["answer"].lower()
            for arm in ARMS:
                hits: list[Hit] = index.search(row["question"], top_k=max(DEPTHS), mode=arm)
                at = found(evidence, [h.text for h in hits])
                for i, depth in enumerate(DEPTHS):
                    arms[arm][i] += at is not None and at <= depth
            pools = {d: passages(index, row["question"], d, scores) for d in (5, 10, 20, 30)}
            scores.save()
            for name, (depth, score) in ORDERS.items():
                order = sorted(pools[depth], key=lambda p: -score(p))
                reads = [(name, order), (f"{name}, fused", fused(order))]
                for counted, read in reads if f"{name}, fused" in orders else reads[:1]:
                    at = found(evidence, [p.text for p in read])
                    best = max((s for p in read[:5] for s in p.sentences), key=lambda s: s[1])
                    figures = orders[counted]
                    figures[0] += at == 1
                    figures[1] += at is not None and at <= 5
                    figures[2] += key in best[0].lower()
    print(f"{args.name} {args.split}, {len(rows)} answerable questions")
    for arm, counts in arms.items():
        print(f"  {arm:<8} evidence in the first " + " / ".join(map(str, DEPTHS)) + ": ", counts)
    for name, (first, five, holds) in orders.items():
        print(f"  {name:<42} evidence@1 {first:>2}  @5 {five:>2}  best sentence holds {holds:>2}")


if __name__ == "__main__":
    main()
