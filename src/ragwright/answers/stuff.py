"""The stuff engine: every retrieved source in one numbered prompt, one call, streamed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.answers._engine import LLMEngine, Notes
from ragwright.llms.prompt import CITE_RULES, Prompter, Source
from ragwright.models import Answer
from ragwright.ports import ChatMessage

TASK = "You answer a question using only the numbered sources you are given. " + CITE_RULES
REQUEST = "Answer the question from the sources above, concisely, citing them as [n]."


def answer_messages(
    prompter: Prompter, question: str, sources: Sequence[Source], context: Notes = ()
) -> list[ChatMessage]:
    return prompter.messages(TASK, question, sources, REQUEST, notes=context)


class StuffEngine(LLMEngine):
    name = "stuff"

    def answer(
        self, question: str, sources: Sequence[Source], context: Notes = ()
    ) -> Iterator[str | Answer]:
        messages = answer_messages(self.prompter, question, sources, context)
        yield from self._written(messages, sources)
