"""One scope's LLM (a request, an ingest run): the model wrapped in the response cache, the
budget guard and the cost ledger, in that order from the outside in:

    TracedLLM → CachedLLM → BudgetedLLM → LedgerLLM → the provider

so a cache hit spends no budget and costs nothing in the ledger, and every call that reaches
the server is both counted against the budget and written to the ledger. Every component of the
scope (query processors, rerankers, the answer engine) gets ``session.llm`` and so draws on
the same budget. `TracedLLM` opens a tracing span per call, a cache hit's too (see
`ragwright.tracing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ragwright.llms.budget import BudgetedLLM, BudgetGuard
from ragwright.llms.cache import CachedLLM
from ragwright.llms.ledger import LedgerLLM, estimate_cost
from ragwright.llms.settings import Budget, Price
from ragwright.llms.traced import TracedLLM
from ragwright.models import Answer, Usage
from ragwright.ports import LLM, CallLedger, ResponseCache

#: The wrappers a session puts around a model; one of them is already some session's.
LLM_WRAPPERS = (TracedLLM, CachedLLM, BudgetedLLM, LedgerLLM)


@dataclass
class LLMSession:
    """One scope's wrapped model (``llm``), its budget ``guard``, its ``cache`` (None when
    off) and the ``prices`` its cost is figured from."""

    llm: LLM
    guard: BudgetGuard
    cache: CachedLLM | None
    prices: Mapping[str, Price]

    @property
    def usage(self) -> Usage:
        hits = self.cache.hits if self.cache is not None else 0
        return self.guard.spent + Usage(cached_calls=hits)

    @property
    def cost(self) -> float | None:
        return estimate_cost(self.prices, self.llm.model, self.guard.spent)

    def finish(self, answer: Answer) -> Answer:
        """``answer`` with this session's usage and cost."""
        return replace(answer, usage=self.usage, cost=self.cost)


def open_session(
    llm: LLM,
    *,
    scope: str,
    budget: Budget,
    prices: Mapping[str, Price],
    ledger: CallLedger | None,
    cache: ResponseCache | None,
) -> LLMSession:
    guard = BudgetGuard(budget, scope)
    inner: LLM = LedgerLLM(llm, ledger, prices, scope) if ledger is not None else llm
    budgeted = BudgetedLLM(inner, guard)
    cached = CachedLLM(budgeted, cache) if cache is not None else None
    return LLMSession(TracedLLM(cached or budgeted), guard, cached, prices)
