"""A chain of result processors, run in order, with a trace of what each step did.

The order is checked when the chain is built: a processor marked ``last`` (long-context reorder)
must end the chain, and anything after it is a `~ragwright.errors.ConfigError` naming both.
A chain is itself a `ResultProcessor` (``last`` when it ends with one), so chains nest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from ragwright import tracing
from ragwright.errors import ConfigError
from ragwright.models import Hit
from ragwright.ports import ResultProcessor


class Step(NamedTuple):
    """What one processor did: its name and how many hits went in and came out."""

    name: str
    hits_in: int
    hits_out: int


@dataclass(frozen=True, slots=True)
class ChainResult:
    """The processed hits and one `Step` per processor, in order."""

    hits: list[Hit]
    trace: tuple[Step, ...]


class ResultChain:
    """Runs result processors in order. ``apply`` returns the hits with a trace; ``process``
    (the `ResultProcessor` method) returns the hits alone."""

    name: str = "chain"

    def __init__(self, processors: Iterable[ResultProcessor]) -> None:
        self.processors: tuple[ResultProcessor, ...] = tuple(processors)
        for processor in self.processors:
            if not isinstance(processor, ResultProcessor):
                raise ConfigError(
                    f"{processor!r} is not a result processor (it needs name, last and process)"
                )
        for position, processor in enumerate(self.processors[:-1]):
            if processor.last:
                after = self.processors[position + 1]
                raise ConfigError(
                    f"result processor {processor.name!r} must be the last in the chain (a "
                    f"later step would undo its order), but {after.name!r} comes after it; "
                    f"move {processor.name!r} to the end"
                )
        self.last: bool = bool(self.processors) and self.processors[-1].last

    def apply(self, query: str, hits: Iterable[Hit]) -> ChainResult:
        """Run every processor in turn; the input is never modified."""
        current = list(hits)
        trace: list[Step] = []
        for processor in self.processors:
            # A reranker is a result processor with a `rerank` method too.
            name = tracing.RERANK if hasattr(processor, "rerank") else tracing.PROCESS
            with tracing.span(name, processor=processor.name, hits_in=len(current)):
                processed = processor.process(query, list(current))
            trace.append(Step(processor.name, len(current), len(processed)))
            current = processed
        return ChainResult(current, tuple(trace))

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        return self.apply(query, hits).hits

    def __repr__(self) -> str:
        return f"ResultChain([{', '.join(map(repr, self.processors))}])"
