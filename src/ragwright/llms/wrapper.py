"""The base of the wrappers a session stacks around a model (cache, budget, ledger): it holds
the wrapped model, answers to its name and passes `chat` and `stream` through, handing every
completion that comes back to `_completed`, so each wrapper writes only what it adds. A wrapper
that must enclose each call (a tracing span) overrides `_calling` instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext

from ragwright.ports import LLM, ChatMessage, Completion


class WrappedLLM:
    """An `LLM` that delegates to ``llm``."""

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
        with self._calling(max_tokens, stream=False) as completed:
            completion = self.llm.chat(
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                json_mode=json_mode,
                logprobs=logprobs,
            )
            completed(completion)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        with self._calling(max_tokens, stream=True) as completed:
            for item in self.llm.stream(messages, max_tokens=max_tokens, temperature=temperature):
                if isinstance(item, Completion):
                    completed(item)
                yield item

    def _calling(
        self, max_tokens: int, *, stream: bool
    ) -> AbstractContextManager[Callable[[Completion], None]]:
        """Around one call: gives what sees its completion (`_completed`)."""
        return nullcontext(self._completed)

    def _completed(self, completion: Completion) -> None:
        """Sees each completion of the wrapped model (a chat's, or a stream's last item)."""
