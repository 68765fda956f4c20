"""The cost ledger: every LLM call that reached a server, with its tokens and estimated cost,
recorded per model (prices per million tokens from ``[llm.prices]``; unknown price: no cost).
Stored by the index's store (its `LLMRecords`); ``ragwright stats`` sums it."""

from __future__ import annotations

from collections.abc import Mapping

from ragwright.llms.settings import Price
from ragwright.llms.wrapper import WrappedLLM
from ragwright.models import Usage
from ragwright.ports import LLM, CallLedger, Completion


def estimate_cost(prices: Mapping[str, Price], model: str, usage: Usage) -> float | None:
    price = prices.get(model)
    return None if price is None else price.cost(usage)


class LedgerLLM(WrappedLLM):
    """An `LLM` whose calls are written to a ledger, under ``scope`` (request, ingest, …)."""

    def __init__(
        self, llm: LLM, store: CallLedger, prices: Mapping[str, Price], scope: str = "request"
    ) -> None:
        super().__init__(llm)
        self.store = store
        self.prices = prices
        self.scope = scope

    def _completed(self, completion: Completion) -> None:
        if completion.cached:
            return
        cost = estimate_cost(self.prices, self.model, completion.usage)
        self.store.record_call(self.scope, self.model, completion.usage, cost)
