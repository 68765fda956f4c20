"""The outermost wrapper of a session's model: a `ragwright.tracing` span per call, with the
model, the tokens read and written, and whether the response cache answered."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragwright import tracing
from ragwright.ports import LLM, ChatMessage, Completion
from ragwright.tracing import Span


class TracedLLM:
    """An `LLM` that opens a ``ragwright.llm`` span around each `chat` and `stream`."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @property
    def model(self) -> str:
        return self.llm.model

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        with tracing.span(tracing.LLM_CALL, **_request(self.model, max_tokens)) as span:
            completion = self.llm.chat(
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                json_mode=json_mode,
                logprobs=logprobs,
            )
            _record(span, completion)
            return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        attributes = _request(self.model, max_tokens) | {"ragwright.llm.stream": True}
        with tracing.span(tracing.LLM_CALL, **attributes) as span:
            for item in self.llm.stream(messages, max_tokens=max_tokens, temperature=temperature):
                if isinstance(item, Completion):
                    _record(span, item)
                yield item


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
