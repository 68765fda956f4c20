"""A listwise reranker over the `LLM` port: the model reads numbered passages and answers
with their order (RankGPT-style).

Windows: up to ``window`` passages go to the model at once. A longer list is ranked by a window
sliding from the bottom of the list to its top in steps of ``step`` (default half a window):
each call reorders one window in place, so a relevant passage found low in the list is carried
up window by window and can reach the top. That costs ``ceil((n - window) / step) + 1`` calls
for ``n`` hits; passages below the first window's reach are still ranked among their
neighbours.

Robustness: the answer is parsed leniently (see `ragwright.rerankers._prompt.parse_ranking`). A
window whose answer holds no usable ranking keeps its incoming order; the search goes on and the
reason is logged (logger ``ragwright.rerankers``) and returned by :meth:`rerank_with_notes`. An
error raised by the LLM itself (a failed HTTP call, a budget) is not swallowed: it propagates.

Passages are untrusted: they are fenced with a random boundary token and the system message
tells the model never to follow instructions inside them (see ``_prompt``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ragwright.errors import ConfigError
from ragwright.models import Hit
from ragwright.ports import LLM, ChatMessage
from ragwright.rerankers._base import check_positive, check_top_k, reranked
from ragwright.rerankers._prompt import boundary, build_messages, flatten, parse_ranking

logger = logging.getLogger("ragwright.rerankers")

_OWNER = "LLM listwise reranker"


@dataclass(frozen=True, slots=True)
class RerankResult:
    """The reranked hits, how many LLM calls it took, and one note per window whose answer was
    repaired (unknown numbers ignored, passages left out) or unusable (order kept)."""

    hits: list[Hit]
    calls: int
    notes: tuple[str, ...] = ()


class LLMListwiseReranker:
    """Reranks hits by asking an `LLM` for their order; a `Reranker` and a `ResultProcessor`.

    ``window`` passages go into one prompt, each cut to ``max_passage_chars``; ``step`` is how
    far the sliding window moves (see the module). Scores are ``1 / position`` (1, 0.5, …) on
    `Scale.FUSED`: an LLM gives an order, not a similarity.
    """

    name: str = "llm_rerank"
    last: bool = False

    def __init__(
        self,
        llm: LLM,
        window: int = 20,
        max_passage_chars: int = 600,
        *,
        step: int | None = None,
        max_answer_tokens: int | None = None,
    ) -> None:
        self.llm = llm
        self.window = check_positive(_OWNER, "window", window)
        if self.window < 2:
            raise ConfigError(f"{_OWNER}: window must be at least 2; got {window!r}")
        self.max_passage_chars = check_positive(_OWNER, "max_passage_chars", max_passage_chars)
        self.step = check_positive(_OWNER, "step", step if step is not None else window // 2)
        if self.step >= self.window:
            raise ConfigError(
                f"{_OWNER}: step must be below window ({self.window}) so windows overlap; "
                f"got {step!r}"
            )
        self.max_answer_tokens = (
            None
            if max_answer_tokens is None
            else check_positive(_OWNER, "max_answer_tokens", max_answer_tokens)
        )

    def __repr__(self) -> str:
        return f"LLMListwiseReranker(window={self.window}, step={self.step})"

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        return self.rerank_with_notes(query, hits, top_k).hits

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return self.rerank(query, hits)

    def rerank_with_notes(
        self, query: str, hits: list[Hit], top_k: int | None = None
    ) -> RerankResult:
        """Like :meth:`rerank`, with the number of calls and what had to be repaired."""
        top_k = check_top_k(_OWNER, top_k)
        order = list(range(len(hits)))
        notes: list[str] = []
        calls = 0
        if len(hits) > 1:
            texts = [flatten(hit.chunk.text, self.max_passage_chars) for hit in hits]
            for start, end in self._windows(len(hits)):
                calls += 1
                local, note = self._rank_window(query, [texts[i] for i in order[start:end]])
                order[start:end] = [order[start + i] for i in local]
                if note:
                    notes.append(f"window {start + 1}-{end}: {note}")
                    logger.warning("%s, %s", _OWNER, notes[-1])
        scores = [1.0 / position for position in range(1, len(order) + 1)]
        return RerankResult(reranked(hits, order, scores, top_k), calls, tuple(notes))

    def _windows(self, count: int) -> list[tuple[int, int]]:
        """``(start, end)`` of each window, from the bottom of the list to its top."""
        spans = []
        end = count
        while True:
            start = max(0, end - self.window)
            spans.append((start, end))
            if start == 0:
                return spans
            end -= self.step

    def _rank_window(self, query: str, passages: Sequence[str]) -> tuple[tuple[int, ...], str]:
        token = boundary([query, *passages])
        messages: list[ChatMessage] = build_messages(query, passages, token)
        budget = self.max_answer_tokens or 8 * len(passages) + 32
        answer = self.llm.chat(messages, max_tokens=budget, temperature=0.0).text
        ranking = parse_ranking(answer, len(passages))
        note = ranking.note if ranking.parsed else f"kept the incoming order: {ranking.note}"
        return ranking.order, note
