"""What the LLM answer engines share: the model, the answer's token limit, the hardened
prompter, the graph context (when asked for), and the not-found answer (with no LLM call)
when retrieval found nothing."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

from ragwright.answers._compose import not_found, written
from ragwright.answers.graph_context import GraphContext
from ragwright.errors import ConfigError
from ragwright.llms.prompt import Prompter, Source, numbered
from ragwright.models import Answer, Hit
from ragwright.ports import LLM, ChatMessage

#: Notes for a prompt: ``(kind, text)`` pairs, fenced like sources (see `Prompter.messages`).
Notes = Sequence[tuple[str, str]]


class LLMEngine(ABC):
    """Base of the stuff, map-reduce, refine and FLARE engines: `stream` numbers the hits,
    builds their graph context (with ``graph``) and hands both to the engine's `answer`, which
    puts the context in every prompt that sees all the sources."""

    name: str

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int = 800,
        harden: bool = True,
        key: bytes | None = None,
        graph: GraphContext | None = None,
    ) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.prompter = Prompter(harden=harden, key=key)
        self.graph = graph

    def stream(self, question: str, hits: Sequence[Hit]) -> Iterator[str | Answer]:
        if not hits:
            yield from not_found(hits, self.name, self.llm.model)
            return
        sources = numbered(hits)
        context = self.graph.notes(sources) if self.graph is not None else []
        yield from self.answer(question, sources, context)

    def _written(
        self,
        messages: Sequence[ChatMessage],
        sources: Sequence[Source],
        warnings: Sequence[str] = (),
    ) -> Iterator[str | Answer]:
        """The engine's last call, streamed, then its `Answer` (see `_compose.written`)."""
        return written(
            self.llm,
            messages,
            sources,
            engine=self.name,
            max_tokens=self.max_tokens,
            warnings=warnings,
        )

    def _group_size(self, parameter: str, size: int) -> int:
        """``size`` (sources per call of a multi-call engine) if it is at least 1."""
        if size < 1:
            raise ConfigError(f"{self.name}: {parameter} must be >= 1; got {size}")
        return size

    @abstractmethod
    def answer(
        self, question: str, sources: Sequence[Source], context: Notes = ()
    ) -> Iterator[str | Answer]:
        """Pieces of the answer from ``sources`` (never empty) and their ``context`` (the
        graph section's notes, if any), then the `Answer`."""


def in_groups(sources: Sequence[Source], size: int) -> list[Sequence[Source]]:
    """``sources`` in order, ``size`` at a time (the last group may be smaller)."""
    return [sources[i : i + size] for i in range(0, len(sources), size)]
