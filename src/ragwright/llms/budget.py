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

from ragwright.errors import BudgetExceeded
from ragwright.llms.settings import Budget
from ragwright.models import Usage
from ragwright.ports import LLM, ChatMessage, Completion

CHARS_PER_TOKEN = 4


class BudgetGuard:
    """What one scope spent, checked against its `Budget`. Thread-safe."""

    def __init__(self, budget: Budget | None = None, scope: str = "request") -> None:
        self.budget = budget or Budget()
        self.scope = scope
        self._spent = Usage()
        self._lock = threading.Lock()

    @property
    def spent(self) -> Usage:
        with self._lock:
            return self._spent

    def allow(self, messages: Sequence[ChatMessage], max_tokens: int) -> int:
        """The completion tokens the next call may use; raises `BudgetExceeded` if none."""
        with self._lock:
            spent, budget = self._spent, self.budget
            if budget.max_calls is not None and spent.calls >= budget.max_calls:
                self._refuse(f"the {self.scope} budget of {budget.max_calls} LLM calls is spent")
            if budget.max_tokens is None:
                return max_tokens
            prompt = math.ceil(sum(len(m.content) for m in messages) / CHARS_PER_TOKEN)
            left = budget.max_tokens - spent.total_tokens - prompt
            if left < 1:
                self._refuse(
                    f"the {self.scope} budget of {budget.max_tokens} tokens cannot cover another "
                    f"call (its prompt alone is about {prompt} tokens)"
                )
            return min(max_tokens, left)

    def charge(self, usage: Usage) -> None:
        with self._lock:
            self._spent = self._spent + usage

    def _refuse(self, reason: str) -> None:
        spent = self._spent
        raise BudgetExceeded(reason, calls=spent.calls, tokens=spent.total_tokens)


class BudgetedLLM:
    """An `LLM` whose calls draw on a `BudgetGuard`."""

    def __init__(self, llm: LLM, guard: BudgetGuard) -> None:
        self.llm = llm
        self.guard = guard

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
        allowed = self.guard.allow(messages, max_tokens)
        completion = self.llm.chat(
            messages,
            max_tokens=allowed,
            temperature=temperature,
            json_mode=json_mode,
            logprobs=logprobs,
        )
        self.guard.charge(completion.usage)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        allowed = self.guard.allow(messages, max_tokens)
        for item in self.llm.stream(messages, max_tokens=allowed, temperature=temperature):
            if isinstance(item, Completion):
                self.guard.charge(item.usage)
            yield item
