"""`Reader`: what the read surfaces (the HTTP routes, the chat routes, ``search`` and ``ask``)
ask of what they serve, so that each is written once for one index and for a federation.

Two implementations: `IndexReader` over one `Index`, and `ragwright.federation.Federation`,
whose members each search in their own space. Every lookup says which member holds what it
found (a federation's member name; None for one index), and a search says its route (one
index) or the members it left out (a federation): the surfaces show what they are given.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, Unpack

from ragwright.filters import Filter
from ragwright.index import AskOptions, Index
from ragwright.models import Answer, Chunk, Document, DocumentInfo, Hit, Route
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.search.request import SearchRequest


@dataclass(frozen=True)
class Found:
    """A search's hits, best first. ``route``: the mode that ran and why (one index; a
    federation's members each plan their own). ``warnings``: the members a federated search
    left out and why; None where nothing can be left out (one index)."""

    hits: list[Hit]
    route: Route | None = None
    warnings: tuple[str, ...] | None = None


class Reader(Protocol):
    """Search, answers and lookups over one index or several. ``member`` names the member
    index to look in (a hit's or citation's ``index``); None: the first that has it. One
    index has no members: it ignores ``member`` and names none."""

    def find(self, query: str, request: SearchRequest, /) -> Found: ...

    def ask(self, question: str, /, **options: Unpack[AskOptions]) -> Answer: ...

    def ask_stream(
        self, question: str, /, **options: Unpack[AskOptions]
    ) -> Iterator[str | Answer]: ...

    def chunk(
        self, chunk_id: str, member: str | None = None, /, *, caller: Caller = EVERYONE
    ) -> tuple[str | None, Chunk] | None: ...

    def document(
        self, id_or_source: str, member: str | None = None, /, *, caller: Caller = EVERYONE
    ) -> tuple[str | None, Document] | None: ...

    def chunks_of(
        self, document_id: str, member: str | None, /, *, caller: Caller = EVERYONE
    ) -> list[Chunk]: ...

    def documents(
        self, where: Filter | str | None = None, /, *, caller: Caller = EVERYONE
    ) -> Sequence[tuple[str | None, DocumentInfo]]: ...

    def modes_for(self, caller: Caller = EVERYONE, /) -> list[str]:
        """The search modes that can serve ``caller`` now (``auto`` first)."""
        ...

    def filter_warning(self, where: Filter | None, found: int, /) -> str | None:
        """Why ``where`` may have matched nothing (``found`` hits), or None."""
        ...


class IndexReader:
    """One index as a `Reader`: lookups name no member."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def find(self, query: str, request: SearchRequest, /) -> Found:
        route, hits = self.index.searching.search_routed(query, request)
        return Found(hits, route)

    def ask(self, question: str, /, **options: Unpack[AskOptions]) -> Answer:
        return self.index.ask(question, **options)

    def ask_stream(self, question: str, /, **options: Unpack[AskOptions]) -> Iterator[str | Answer]:
        return self.index.ask_stream(question, **options)

    def chunk(
        self, chunk_id: str, member: str | None = None, /, *, caller: Caller = EVERYONE
    ) -> tuple[str | None, Chunk] | None:
        chunk = self.index.documents.chunk(chunk_id, caller=caller)
        return None if chunk is None else (None, chunk)

    def document(
        self, id_or_source: str, member: str | None = None, /, *, caller: Caller = EVERYONE
    ) -> tuple[str | None, Document] | None:
        document = self.index.documents.get(id_or_source, caller=caller)
        return None if document is None else (None, document)

    def chunks_of(
        self, document_id: str, member: str | None, /, *, caller: Caller = EVERYONE
    ) -> list[Chunk]:
        return self.index.documents.chunks_of(document_id, caller=caller)

    def documents(
        self, where: Filter | str | None = None, /, *, caller: Caller = EVERYONE
    ) -> list[tuple[str | None, DocumentInfo]]:
        return [(None, info) for info in self.index.documents.list(where, caller=caller)]

    def modes_for(self, caller: Caller = EVERYONE, /) -> list[str]:
        return self.index.searching.modes_for(caller)

    def filter_warning(self, where: Filter | None, found: int, /) -> str | None:
        if where is None or found:
            return None
        return self.index.documents.filter_warning(where)


__all__ = ["Found", "IndexReader", "Reader"]
