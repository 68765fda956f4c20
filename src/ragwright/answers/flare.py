"""FLARE (Jiang et al., 2023, "Active Retrieval Augmented Generation"): retrieve again for what
the model is unsure of.

1. Draft an answer from the retrieved sources, asking for token log-probabilities.
2. Find the low-confidence sentences: those holding a token whose probability is below
   ``threshold``. A server that sends no logprobs gets a self-check instead: one JSON-mode call
   asks which draft sentences the sources do not clearly support.
3. Retrieve again with each such sentence as the query, its low-confidence tokens masked out
   (they are what the model guessed; FLARE's "masked query"), up to ``max_queries`` queries and
   ``max_sources`` sources in all.
4. If new sources came back, write the answer again from all of them (streamed); otherwise the
   draft stands. Unlike the paper, which looks ahead sentence by sentence, the whole answer is
   drafted once and rewritten at most once: two or three calls, a bounded cost.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence

from ragwright.answers._compose import compose
from ragwright.answers._engine import LLMEngine, Notes
from ragwright.answers.citations import strip_unknown
from ragwright.answers.graph_context import GraphContext
from ragwright.answers.stuff import answer_messages
from ragwright.llms.prompt import Source, numbered
from ragwright.models import Answer, Hit
from ragwright.ports import LLM, Completion, TokenLogprob
from ragwright.sentences import sentence_spans

CHECK_TASK = (
    "You check a draft answer against numbered sources. The draft's sentences are numbered "
    "(1), (2), … Find the sentences the sources do not clearly support. Reply with a JSON "
    'object only, e.g. {"unsupported": [2, 3]}, or {"unsupported": []} if all are supported.'
)
CHECK_REQUEST = "Which draft sentences do the sources not clearly support? Reply in JSON."
_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")

Retrieve = Callable[[str], Sequence[Hit]]


class FlareEngine(LLMEngine):
    name = "flare"

    def __init__(
        self,
        llm: LLM,
        retrieve: Retrieve,
        *,
        max_tokens: int = 800,
        threshold: float = 0.4,
        max_queries: int = 3,
        max_sources: int = 12,
        harden: bool = True,
        key: bytes | None = None,
        graph: GraphContext | None = None,
    ) -> None:
        super().__init__(llm, max_tokens=max_tokens, harden=harden, key=key, graph=graph)
        self.retrieve = retrieve
        self.min_logprob = math.log(threshold)
        self.max_queries = max_queries
        self.max_sources = max_sources

    def answer(
        self, question: str, sources: Sequence[Source], context: Notes = ()
    ) -> Iterator[str | Answer]:
        hits = [source.hit for source in sources]
        messages = answer_messages(self.prompter, question, sources, context)
        draft = self.llm.chat(messages, max_tokens=self.max_tokens, logprobs=True)
        queries, how = self._uncertain(question, draft, sources)
        more = self._retrieve(queries, hits)
        notes: list[str] = []
        if queries:
            notes.append(
                f"FLARE: {len(queries)} low-confidence sentences ({how}); "
                f"{len(more)} more sources retrieved"
            )
        if more:
            wider = numbered([*hits, *more])
            messages = answer_messages(self.prompter, question, wider, context)
            yield from self._written(messages, wider, notes)
            return
        text, removed = strip_unknown(draft.text, (s.number for s in sources))
        yield text
        yield compose(text, sources, self.name, self.llm.model, removed, notes)

    def _uncertain(
        self, question: str, draft: Completion, sources: Sequence[Source]
    ) -> tuple[list[str], str]:
        """Masked queries for the draft's low-confidence sentences, and how they were found."""
        spans = sentence_spans(draft.text)
        tokens = draft.logprobs
        if tokens and "".join(t.token for t in tokens) == draft.text:
            queries = [q for q in (self._masked(draft.text, s, tokens) for s in spans) if q]
            return queries[: self.max_queries], "token logprobs"
        sentences = [_query(draft.text[s:e]) for s, e in spans]
        flagged = self._self_check(question, sentences, sources)
        return [sentences[i] for i in flagged if sentences[i]][: self.max_queries], "self-check"

    def _masked(self, text: str, span: tuple[int, int], tokens: Sequence[TokenLogprob]) -> str:
        """The sentence without its low-confidence tokens, if it has any; else ""."""
        kept, low, offset = [], False, 0
        for token in tokens:
            start, offset = offset, offset + len(token.token)
            if start < span[0] or start >= span[1]:
                continue
            if token.logprob < self.min_logprob:
                low = True
            else:
                kept.append(token.token)
        return _query("".join(kept)) if low else ""

    def _self_check(
        self, question: str, sentences: Sequence[str], sources: Sequence[Source]
    ) -> list[int]:
        draft = "\n".join(f"({n}) {s}" for n, s in enumerate(sentences, start=1))
        messages = self.prompter.messages(
            CHECK_TASK, question, sources, CHECK_REQUEST, notes=[("draft", draft)]
        )
        reply = self.llm.chat(messages, max_tokens=100, json_mode=True).text
        try:
            value = json.loads(reply)
            numbers = value.get("unsupported", []) if isinstance(value, dict) else value
            chosen = [int(n) for n in numbers]
        except (ValueError, TypeError, AttributeError):
            chosen = [int(n) for n in _DIGITS.findall(reply)]
        return sorted({n - 1 for n in chosen if 1 <= n <= len(sentences)})

    def _retrieve(self, queries: Sequence[str], hits: Sequence[Hit]) -> list[Hit]:
        seen = {hit.chunk.id for hit in hits}
        more: list[Hit] = []
        for query in queries:
            for hit in self.retrieve(query):
                if len(hits) + len(more) >= self.max_sources:
                    return more
                if hit.chunk.id not in seen:
                    seen.add(hit.chunk.id)
                    more.append(hit)
        return more


def _query(text: str) -> str:
    """A retrieval query from answer text: no citation markers, no trailing punctuation."""
    return _SPACES.sub(" ", _MARKER.sub("", text)).strip(" .,;:")
