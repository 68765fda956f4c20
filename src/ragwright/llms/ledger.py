"""The cost ledger: every LLM call that reached a server, with its tokens and estimated cost,
recorded per model (prices per million tokens from ``[llm.prices]``; unknown price: no cost).
Stored in the index's SQLite (see `ragwright.stores.sqlite_llm`); ``ragwright stats`` sums it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

from ragwright.llms.settings import Price
from ragwright.models import Usage
from ragwright.ports import LLM, ChatMessage, Completion


class LedgerStore(Protocol):
    def record_call(self, scope: str, model: str, usage: Usage, cost: float | None) -> None: ...


def estimate_cost(prices: Mapping[str, Price], model: str, usage: Usage) -> float | None:
    price = prices.get(model)
    return None if price is None else price.cost(usage)


class LedgerLLM:
    """An `LLM` whose calls are written to a ledger, under ``scope`` (request, ingest, …)."""

    def __init__(
        self, llm: LLM, store: LedgerStore, prices: Mapping[str, Price], scope: str = "request"
    ) -> None:
        self.llm = llm
        self.store = store
        self.prices = prices
        self.scope = scope

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
        self._record(completion)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        for item in self.llm.stream(messages, max_tokens=max_tokens, temperature=temperature):
            if isinstance(item, Completion):
                self._record(item)
            yield item

    def _record(self, completion: Completion) -> None:
        if completion.cached:
            return
        cost = estimate_cost(self.prices, self.model, completion.usage)
        self.store.record_call(self.scope, self.model, completion.usage, cost)
