"""What the LLM query processors (HyDE, multi-query) share: one call per query, and what an
LLM failure means for a search. A spent budget stops the request; any other error keeps the
query unchanged with a note saying why, unless the processor is ``strict``."""

from __future__ import annotations

from abc import ABC, abstractmethod

from ragwright.errors import BudgetExceeded, RagwrightError
from ragwright.ports import LLM, ChatMessage
from ragwright.query.model import ProcessedQuery


class LLMQueryProcessor(ABC):
    """`process` asks ``llm`` with `messages` and hands the reply to `rewrite`."""

    name: str
    llm: LLM
    max_tokens: int
    strict: bool

    @abstractmethod
    def messages(self, query: str) -> list[ChatMessage]:
        """The chat sent to the LLM for ``query``."""

    @abstractmethod
    def rewrite(self, query: ProcessedQuery, reply: str) -> ProcessedQuery:
        """``query`` changed by the LLM's ``reply`` (with a note either way)."""

    def process(self, query: ProcessedQuery) -> ProcessedQuery:
        if not query.query.strip():
            return query.noted(self.name, False, "the query is empty")
        try:
            reply = self.llm.chat(
                self.messages(query.query), max_tokens=self.max_tokens, temperature=0.0
            ).text
        except BudgetExceeded:
            raise  # a spent budget stops the request; it is not a failure to work around
        except RagwrightError as error:
            if self.strict:
                raise
            return query.noted(self.name, False, f"the LLM failed ({error}); query kept")
        return self.rewrite(query, reply)
