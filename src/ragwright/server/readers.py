"""What a server reads from, by collection: the collections of one index (`IndexReaders`), or
one federation (`FederationReaders`, which has no collections). The read routes (search, ask,
documents, chunks, the chat models) are written once against `Readers`."""

from __future__ import annotations

from typing import Protocol

from ragwright.collection_pool import CollectionPool
from ragwright.errors import UnknownCollection
from ragwright.federation import Federation
from ragwright.reading import IndexReader, Reader


class Readers(Protocol):
    #: The collection the unscoped routes serve; None for a federation.
    default: str | None

    def get(self, collection: str | None = None) -> Reader:
        """The reader of ``collection`` (None: the default); `UnknownCollection` if none."""
        ...

    def names(self) -> list[str | None]:
        """Every collection served, the default first."""
        ...

    def cannot_serve(self, mode: str) -> str:
        """Why a chat model in ``mode`` is not served now (`Reader.modes_for` lacks it)."""
        ...


class IndexReaders:
    """The collections of one index, opened on first use (see `CollectionPool`)."""

    def __init__(self, pool: CollectionPool) -> None:
        self._pool = pool
        self.default: str | None = pool.default.collection

    def get(self, collection: str | None = None) -> Reader:
        return IndexReader(self._pool.get(collection))

    def names(self) -> list[str | None]:
        return [self.default, *(c for c in self._pool.default.collections() if c != self.default)]

    def cannot_serve(self, mode: str) -> str:
        return f"this collection cannot serve {mode} search now"


class FederationReaders:
    """A federation: one reader, no collections."""

    default: str | None = None

    def __init__(self, federation: Federation) -> None:
        self._federation = federation

    def get(self, collection: str | None = None) -> Reader:
        if collection is not None:
            raise UnknownCollection("a federation serves one model, ragwright (with :MODE)")
        return self._federation

    def names(self) -> list[str | None]:
        return [None]

    def cannot_serve(self, mode: str) -> str:
        return f"not every index can serve {mode} search now"
