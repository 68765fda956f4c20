"""The base of the wrappers a session stacks around a model (cache, budget, ledger): it holds
the wrapped model, answers to its name and passes `chat` and `stream` through, handing every
completion that comes back to `_completed`, so each wrapper writes only what it adds."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

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
        completion = self.llm.chat(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            json_mode=json_mode,
            logprobs=logprobs,
        )
        self._completed(completion)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        for item in self.llm.stream(messages, max_tokens=max_tokens, temperature=temperature):
            if isinstance(item, Completion):
                self._completed(item)
            yield item

    def _completed(self, completion: Completion) -> None:
        """Sees each completion of the wrapped model (a chat's, or a stream's last item)."""
