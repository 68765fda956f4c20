"""`LLMs`: the index's model, its cost ledger and response cache, and budgeted sessions."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ragwright.llms import create_llm
from ragwright.llms.session import LLMSession, open_session
from ragwright.llms.settings import LLMSettings
from ragwright.models import CacheStats, LedgerRow
from ragwright.ports import LLM, LLMRecords

#: LLM session scopes that draw on the ingest budget.
INGEST_SCOPES = ("ingest", "graph")


class LLMs:
    """The model ``settings`` describe (or the one given) and the records the index keeps
    (one ledger and cache for all its collections, opened by ``records_of`` on first use).
    ``settings`` may be replaced; each session reads them as they are then."""

    def __init__(
        self,
        settings: LLMSettings,
        given: LLM | None,
        records_of: Callable[[], LLMRecords],
    ) -> None:
        self.settings = settings
        self.given = given
        self._made = given
        self._records_of = records_of
        self._records: LLMRecords | None = None
        # Requests on the HTTP server's threads may be the first to need the model together.
        self._lock = threading.Lock()

    @property
    def llm(self) -> LLM:
        """Created on first use and kept, so its circuit breaker remembers failures across
        requests."""
        with self._lock:
            if self._made is None:
                self._made = create_llm(self.settings)
            return self._made

    @property
    def records(self) -> LLMRecords:
        """The cost ledger and response cache."""
        with self._lock:
            if self._records is None:
                self._records = self._records_of()
            return self._records

    def boundary_key(self) -> bytes:
        return self.records.boundary_key()

    def session(self, scope: str = "request", llm: LLM | None = None) -> LLMSession:
        """A budgeted, ledgered, cached LLM for one request (or one ingest run: ``scope=
        "ingest"``, or a graph extraction run: ``"graph"``, which draws on the ingest budget
        and is recorded in the ledger as ``graph``). Hand ``session.llm`` to every component
        of that scope."""
        settings = self.settings
        budget = settings.ingest_budget if scope in INGEST_SCOPES else settings.request_budget
        return open_session(
            llm or self.llm,
            scope=scope,
            budget=budget,
            prices=settings.prices,
            ledger=self.records,
            cache=self.records if settings.cache else None,
        )

    def ledger(self) -> list[LedgerRow]:
        return self.records.ledger()

    def cache_stats(self) -> CacheStats:
        return self.records.cache_stats()

    def clear_cache(self) -> int:
        """Forget every cached LLM response (say, after the model behind a name changed);
        returns how many there were. The ledger is kept."""
        return self.records.clear_cache()

    def close(self) -> None:
        """Close the records, and the model this object made (one given is the caller's)."""
        if self._records is not None:
            self._records.close()
        close = getattr(self._made, "close", None)
        if self._made is not self.given and callable(close):
            close()
