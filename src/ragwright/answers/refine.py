"""The refine engine: answer from the first sources, then read the rest a group at a time,
refining the answer whenever they add or correct something. The draft so far travels fenced
like a source (it was written from untrusted text). The last step is streamed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.answers._engine import LLMEngine, Notes, in_groups
from ragwright.answers.citations import listed_markers, strip_unknown
from ragwright.answers.graph_context import GraphContext
from ragwright.answers.stuff import answer_messages
from ragwright.llms.prompt import CITE_RULES, NOT_FOUND, Source
from ragwright.models import Answer
from ragwright.ports import LLM, ChatMessage

REFINE_TASK = (
    "You improve a draft answer to a question with new numbered sources. Keep what the draft "
    "says and its citations, add what the new sources add, correct what they contradict, and "
    f"leave the draft unchanged if they add nothing. If the draft is '{NOT_FOUND}' and the new "
    "sources do not answer either, keep it. " + CITE_RULES
)
REFINE_REQUEST = "Write the improved answer, citing sources as [n]. Write only the answer."


class RefineEngine(LLMEngine):
    name = "refine"

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int = 800,
        sources_per_step: int = 1,
        harden: bool = True,
        key: bytes | None = None,
        graph: GraphContext | None = None,
    ) -> None:
        self.sources_per_step = self._group_size("sources_per_step", sources_per_step)
        super().__init__(llm, max_tokens=max_tokens, harden=harden, key=key, graph=graph)

    def answer(
        self, question: str, sources: Sequence[Source], context: Notes = ()
    ) -> Iterator[str | Answer]:
        *steps, last = in_groups(sources, self.sources_per_step)
        draft, removed = "", list[int]()
        read: list[Source] = []
        for group in steps:
            messages = self._messages(question, draft, group)
            read += group
            reply = self.llm.chat(messages, max_tokens=self.max_tokens, temperature=0.0).text
            draft, dropped = strip_unknown(reply.strip(), (s.number for s in read))
            removed += dropped
        warnings = []
        if removed:
            listed = listed_markers(removed)
            warnings.append(f"earlier steps dropped citations of unread sources: {listed}")
        # The graph context goes to the last step only: it cites sources of every step.
        final = self._messages(question, draft, last, context)
        yield from self._written(final, sources, warnings)

    def _messages(
        self, question: str, draft: str, group: Sequence[Source], context: Notes = ()
    ) -> list[ChatMessage]:
        if not draft:
            return answer_messages(self.prompter, question, group, context)
        notes = [("draft", draft), *context]
        return self.prompter.messages(REFINE_TASK, question, group, REFINE_REQUEST, notes=notes)
