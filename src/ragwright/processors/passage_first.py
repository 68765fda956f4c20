"""The right passage first: reorder hits so that, of the chunks of the right document, the one
that answers comes first.

Fused retrieval usually finds the right document and often ranks a neighbouring chunk of it
above the one holding the answer: a chunk that repeats the question's most distinctive word
beats one whose section is about what was asked. Each hit's score is min-max normalized over
the list, then two bonuses are added:

- **heading**: how well the chunk's section headings below the document's title match the
  question's content words (Dice, 0 to 1), times ``heading_weight``. A later chunk of a
  section does not hold its heading, so retrieval never saw it; the title is left out because
  every chunk of the document shares it;
- **coverage**: the share of the question's content words the chunk's text and headings hold,
  each word weighted by how rare it is among the hits (a word every hit has decides nothing),
  times ``coverage_weight``.

The first ``window`` hits (all by default) are sorted by the sum (ties keep their order); the
rest follow in their order, scored without bonuses (so the scores still fall), at no cost.
Search runs it over all its fused candidates: with eval's top 100 (200 candidates) a window
of 50 lowered SciFact test nDCG@10 from 0.7321 to 0.7302. Every hit carries its new score on
the fused scale: it only orders them (a similarity threshold after it is refused, as after
fusion). No hit is added or dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ragwright.models import Hit, Scale, copied_hit
from ragwright.processors._args import integer, real
from ragwright.terms import content_words, dice, headings, holders_in, passage_text


class PassageFirst:
    name: str = "passage_first"
    last: bool = False

    def __init__(
        self, heading_weight: float = 0.0, coverage_weight: float = 0.3, window: int | None = None
    ) -> None:
        self.heading_weight = real("passage_first", "heading_weight", heading_weight, low=0.0)
        self.coverage_weight = real("passage_first", "coverage_weight", coverage_weight, low=0.0)
        self.window = (
            None if window is None else integer("passage_first", "window", window, minimum=1)
        )

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return self.first(query, hits, len(hits))

    def first(self, query: str, hits: list[Hit], count: int) -> list[Hit]:
        """The first ``count`` hits `process` would return (a search keeps its top_k of
        them; re-scoring the others would copy each for nothing)."""
        question = content_words(query)
        if len(hits) < 2 or not question:
            return list(hits[:count])
        window = hits if self.window is None else hits[: self.window]
        # Only which question words each hit holds matters (not all of its words).
        holders = holders_in(question, [passage_text(h.chunk) for h in window])
        heading = None  # times a weight of 0 adds exactly nothing: not computed
        if self.heading_weight:
            heading = [
                dice(question, content_words(" ".join(headings(h.chunk)[1:]))) for h in window
            ]
        scores = [h.score for h in hits]
        order = self.ranked(question, scores, holders, len(window), count, heading)
        return [rescored(hits[position], score) for position, score in order]

    def ranked(
        self,
        question: set[str],
        scores: Sequence[float],
        holders: Mapping[str, Sequence[int]],
        window: int,
        count: int,
        heading: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """(position, new score) of the first ``count`` hits, for hits of these ``scores``
        whose first ``window`` are reordered: ``holders`` are the positions (among those) of
        the hits holding each question word, ``heading`` how well each matches the question's
        words with its headings (for a heading weight). A search that builds no `Hit` per
        candidate reorders its candidates with it."""
        low, high = min(scores), max(scores)
        spread = high - low or 1.0
        # Each word's weight is the log of how few of the hits hold it (at least one): a word
        # every hit has decides nothing. Summed in the question's order, word by word.
        weights = [(word, math.log(1 + window / max(1, len(holders[word])))) for word in question]
        total = sum(w for _, w in weights) or 1.0
        covered = [0.0] * window
        for word, weight in weights:
            for position in holders[word]:
                covered[position] += weight
        scored = []
        for position in range(window):
            score = (
                (scores[position] - low) / spread
                + self.heading_weight * (0.0 if heading is None else heading[position])
                + self.coverage_weight * (covered[position] / total)
            )
            scored.append((-score, position))
        scored.sort()
        kept = [(position, -negated) for negated, position in scored[:count]]
        rest = range(window, min(len(scores), window + count - len(kept)))
        return kept + [(position, (scores[position] - low) / spread) for position in rest]


def rescored(hit: Hit, score: float) -> Hit:
    """``hit`` with ``score`` on the fused scale."""
    return copied_hit(hit, score=score, scale=Scale.FUSED, source=hit.source)
