"""The stuff engine: every retrieved source in one numbered prompt, one call, streamed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright.answers._compose import not_found, written
from ragwright.answers.prompt import CITE_RULES, Prompter, Source, numbered
from ragwright.models import Answer, Hit
from ragwright.ports import LLM, ChatMessage

TASK = "You answer a question using only the numbered sources you are given. " + CITE_RULES
REQUEST = "Answer the question from the sources above, concisely, citing them as [n]."


def answer_messages(
    prompter: Prompter, question: str, sources: Sequence[Source]
) -> list[ChatMessage]:
    return prompter.messages(TASK, question, sources, REQUEST)


class StuffEngine:
    name = "stuff"

    def __init__(
        self, llm: LLM, *, max_tokens: int = 800, harden: bool = True, key: bytes | None = None
    ) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.prompter = Prompter(harden=harden, key=key)

    def stream(self, question: str, hits: Sequence[Hit]) -> Iterator[str | Answer]:
        if not hits:
            yield from not_found(hits, self.name, self.llm.model)
            return
        sources = numbered(hits)
        messages = answer_messages(self.prompter, question, sources)
        yield from written(
            self.llm, messages, sources, engine=self.name, max_tokens=self.max_tokens
        )
