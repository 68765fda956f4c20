"""The outermost wrapper of a session's model: a `ragwright.tracing` span per call, with the
model, the tokens read and written, and whether the response cache answered."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ragwright import tracing
from ragwright.llms.wrapper import WrappedLLM
from ragwright.ports import Completion
from ragwright.tracing import Span


class TracedLLM(WrappedLLM):
    """An `LLM` that opens a ``ragwright.llm`` span around each `chat` and `stream`."""

    @contextmanager
    def _calling(self, max_tokens: int, *, stream: bool) -> Iterator[Callable[[Completion], None]]:
        attributes = _request(self.model, max_tokens)
        if stream:
            attributes["ragwright.llm.stream"] = True
        with tracing.span(tracing.LLM_CALL, **attributes) as span:
            yield lambda completion: _record(span, completion)


def _request(model: str, max_tokens: int) -> dict[str, tracing.Attribute]:
    # OpenTelemetry's GenAI semantic conventions name these.
    return {"gen_ai.request.model": model, "gen_ai.request.max_tokens": max_tokens}


def _record(span: Span, completion: Completion) -> None:
    span.set("gen_ai.response.model", completion.model)
    span.set("gen_ai.usage.input_tokens", completion.usage.prompt_tokens)
    span.set("gen_ai.usage.output_tokens", completion.usage.completion_tokens)
    span.set("ragwright.llm.cached", completion.cached)
    if completion.finish_reason:
        span.set("gen_ai.response.finish_reasons", completion.finish_reason)
