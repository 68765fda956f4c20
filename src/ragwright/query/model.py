"""The query value that query processors pass along, and the port they implement.

A `ProcessedQuery` starts as the user's text and is rewritten step by step; every step adds
one `Note` saying whether it acted and, either way, why. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import NamedTuple, Protocol, runtime_checkable


class QueryKind(StrEnum):
    """What part of the query a processor changes; the chain's order rules are by kind."""

    REWRITE = "rewrite"  # rewrites the query itself (normalization)
    EXPAND = "expand"  # adds keyword-arm terms (synonyms)
    DENSE = "dense"  # replaces what the vector arm embeds (HyDE)
    VARIANTS = "variants"  # adds extra queries, each retrieved and fused (multi-query)


class Note(NamedTuple):
    """What one processor did: its name, whether it acted, and what it did or why not."""

    processor: str
    acted: bool
    reason: str


@dataclass(frozen=True, slots=True)
class ProcessedQuery:
    """A query on its way to retrieval.

    ``query`` is the (rewritten) question: what LLM processors read and, by default, what the
    vector arm embeds. ``expansions`` are extra keyword-arm terms (synonyms): ``text``, the
    BM25 query, is ``query`` followed by them. ``hypothetical`` (HyDE) replaces ``query`` in
    the vector arm: ``dense_text`` is whichever applies. ``variants`` are extra queries, each
    retrieved in the same mode and fused with the main ranking.
    """

    original: str
    query: str
    expansions: tuple[str, ...] = ()
    hypothetical: str | None = None
    variants: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()

    @classmethod
    def of(cls, text: str) -> ProcessedQuery:
        """The unprocessed query for ``text``."""
        return cls(original=text, query=text)

    @property
    def text(self) -> str:
        """The keyword (BM25) arm's query: the query and its expansion terms."""
        return " ".join((self.query, *self.expansions)) if self.expansions else self.query

    @property
    def dense_text(self) -> str:
        """What the vector arm embeds: the hypothetical passage if any, else the query."""
        return self.query if self.hypothetical is None else self.hypothetical

    def noted(self, processor: str, acted: bool, reason: str) -> ProcessedQuery:
        """This query with one more note."""
        return replace(self, notes=(*self.notes, Note(processor, acted, reason)))


@runtime_checkable
class QueryProcessor(Protocol):
    """Transforms a query before retrieval and records a `Note` saying whether it acted.

    ``kind`` is a `QueryKind` value; `QueryChain` checks the order of kinds."""

    name: str
    kind: str

    def process(self, query: ProcessedQuery) -> ProcessedQuery: ...
