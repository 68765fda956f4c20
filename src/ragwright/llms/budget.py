"""The budget guard: limits on LLM calls and tokens for one scope (a request, an ingest run),
shared by every component that calls the LLM in that scope.

Wrap the scope's LLM once in `BudgetedLLM` and hand that to the query processors, rerankers and
the answer engine: they all draw on one `BudgetGuard`. A call is refused with `BudgetExceeded`
(saying what was spent) when the calls are used up, or when the tokens left would not even
cover its prompt (estimated at 4 characters per token); otherwise its completion is capped at
the tokens left. Spending is counted from the usage the server reports.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ragwright.errors import BudgetExceeded
from ragwright.llms.settings import Budget
from ragwright.llms.wrapper import WrappedLLM
from ragwright.models import Usage
from ragwright.ports import LLM, ChatMessage, Completion

CHARS_PER_TOKEN = 4


class BudgetGuard:
    """What one scope spent, checked against its `Budget`. Thread-safe: a call in flight holds
    a reservation (one call, and its prompt and completion tokens), so components calling at
    the same time cannot together exceed the budget."""

    def __init__(self, budget: Budget | None = None, scope: str = "request") -> None:
        self.budget = budget or Budget()
        self.scope = scope
        self._spent = Usage()
        self._reserved_calls = 0
        self._reserved_tokens = 0
        self._lock = threading.Lock()

    @property
    def spent(self) -> Usage:
        with self._lock:
            return self._spent

    @contextmanager
    def call(self, messages: Sequence[ChatMessage], max_tokens: int) -> Iterator[int]:
        """Reserves one call for the block, which gets the completion tokens it may use and
        charges the usage the server reports; raises `BudgetExceeded` if there is no room."""
        allowed, tokens = self._reserve(messages, max_tokens)
        try:
            yield allowed
        finally:
            with self._lock:
                self._reserved_calls -= 1
                self._reserved_tokens -= tokens

    def charge(self, usage: Usage) -> None:
        with self._lock:
            self._spent = self._spent + usage

    def _reserve(self, messages: Sequence[ChatMessage], max_tokens: int) -> tuple[int, int]:
        with self._lock:
            spent, budget = self._spent, self.budget
            calls = spent.calls + self._reserved_calls
            if budget.max_calls is not None and calls >= budget.max_calls:
                self._refuse(f"the {self.scope} budget of {budget.max_calls} LLM calls is spent")
            allowed, tokens = max_tokens, 0
            if budget.max_tokens is not None:
                prompt = math.ceil(sum(len(m.content) for m in messages) / CHARS_PER_TOKEN)
                left = budget.max_tokens - spent.total_tokens - self._reserved_tokens - prompt
                if left < 1:
                    self._refuse(
                        f"the {self.scope} budget of {budget.max_tokens} tokens cannot cover "
                        f"another call (its prompt alone is about {prompt} tokens)"
                    )
                allowed = min(max_tokens, left)
                tokens = prompt + allowed
            self._reserved_calls += 1
            self._reserved_tokens += tokens
            return allowed, tokens

    def _refuse(self, reason: str) -> None:
        spent = self._spent
        raise BudgetExceeded(reason, calls=spent.calls, tokens=spent.total_tokens)


class BudgetedLLM(WrappedLLM):
    """An `LLM` whose calls draw on a `BudgetGuard`."""

    def __init__(self, llm: LLM, guard: BudgetGuard) -> None:
        super().__init__(llm)
        self.guard = guard

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        with self.guard.call(messages, max_tokens) as allowed:
            return super().chat(
                messages,
                max_tokens=allowed,
                temperature=temperature,
                json_mode=json_mode,
                logprobs=logprobs,
            )

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        with self.guard.call(messages, max_tokens) as allowed:
            yield from super().stream(messages, max_tokens=allowed, temperature=temperature)

    def _completed(self, completion: Completion) -> None:
        self.guard.charge(completion.usage)
