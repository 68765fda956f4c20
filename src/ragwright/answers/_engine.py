"""What the LLM answer engines share: the model, the answer's token limit, the hardened
prompter, and the not-found answer (with no LLM call) when retrieval found nothing."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

from ragwright.answers._compose import not_found
from ragwright.answers.prompt import Prompter, Source, numbered
from ragwright.models import Answer, Hit
from ragwright.ports import LLM


class LLMEngine(ABC):
    """Base of the stuff, map-reduce, refine and FLARE engines: `stream` numbers the hits and
    hands them to the engine's `answer`."""

    name: str

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
        yield from self.answer(question, numbered(hits))

    @abstractmethod
    def answer(self, question: str, sources: Sequence[Source]) -> Iterator[str | Answer]:
        """Pieces of the answer from ``sources`` (never empty), then the `Answer`."""
