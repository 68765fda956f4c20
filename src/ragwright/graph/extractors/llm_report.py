"""What an LLM extraction did and cost, and what it could not use: the report a caller prints
(``graph build``) after a run, or after the budget stopped it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ragwright.llms.ledger import estimate_cost
from ragwright.llms.settings import Price
from ragwright.models import Usage

#: At most this many warnings are kept (the counts stay exact).
MAX_WARNINGS = 20


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    chunks: int = 0
    mentions: int = 0
    relations: int = 0
    usage: Usage = Usage()  # noqa: RUF009 - frozen, so one shared default is safe
    cost: float | None = None
    #: Replies that were not the JSON object asked for (their chunk got empty facts).
    invalid_json: int = 0
    #: Entity names the model gave that occur nowhere in the chunk (dropped).
    invented_mentions: int = 0
    #: Relations naming an entity the same reply did not extract, or extracted but not found.
    unresolved_relations: int = 0
    #: Entities and relations of the wrong shape, of a type outside the ontology, or
    #: relating an entity to itself.
    invalid_items: int = 0
    #: Relation weights outside (0, 1] (or not numbers) that were clamped.
    clamped_weights: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        """Calls that reached the server (cached calls are in ``cached_calls``)."""
        return self.usage.calls

    @property
    def cached_calls(self) -> int:
        return self.usage.cached_calls

    def lines(self) -> list[str]:
        """The report as lines of text."""
        usage = self.usage
        cost = f", about {self.cost:.6f} in configured prices" if self.cost is not None else ""
        lines = [
            f"{self.chunks} chunks: {self.mentions} mentions, {self.relations} relations",
            f"{usage.calls} LLM calls, {usage.cached_calls} from the cache, "
            f"{usage.prompt_tokens} + {usage.completion_tokens} tokens{cost}",
            f"not kept: {self.invalid_json} invalid JSON replies, {self.invented_mentions} "
            f"invented mentions, {self.unresolved_relations} unresolved relations, "
            f"{self.invalid_items} invalid items; {self.clamped_weights} weights clamped",
        ]
        return lines + [f"warning: {warning}" for warning in self.warnings]


class ReportTally:
    """Adds up the report of a run, from the threads of its calls."""

    def __init__(self, model: str, prices: Mapping[str, Price]) -> None:
        self._model = model
        self._prices = prices
        self._report = ExtractionReport()
        self._lock = threading.Lock()

    @property
    def report(self) -> ExtractionReport:
        with self._lock:
            report = self._report
        return replace(report, cost=estimate_cost(self._prices, self._model, report.usage))

    def add(self, warning: str | None = None, **counts: int | Usage) -> None:
        with self._lock:
            report = self._report
            changes = {name: getattr(report, name) + value for name, value in counts.items()}
            if warning is not None and len(report.warnings) < MAX_WARNINGS:
                changes["warnings"] = (*report.warnings, warning)
            self._report = replace(report, **changes)
