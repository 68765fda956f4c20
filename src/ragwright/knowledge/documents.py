"""`Documents`: one collection's documents and chunks, read as a caller may read them."""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from ragwright.filters import Filter, parse_filter
from ragwright.models import Chunk, Document, DocumentInfo, StoreStats
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.permitted import readable_chunks, readable_ids, readable_stats
from ragwright.pipeline.search.filter_fields import missing_fields_warning
from ragwright.ports import ChunkExport, ChunkLookup, Store


class Documents:
    """Lookups take the ``caller`` (see `ragwright.permissions`): what it may not read is
    absent, as if it did not exist."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def list(
        self, where: Filter | str | None = None, *, caller: Caller = EVERYONE
    ) -> builtins.list[DocumentInfo]:
        """The documents by source; with a filter, those having a chunk that matches."""
        return self._store.list_documents(caller.scope(_filter(where)))

    def get(self, id_or_source: str, *, caller: Caller = EVERYONE) -> Document | None:
        """A document by id or by source path."""
        found = self._store.get_document(id_or_source) or self._store.find_document(id_or_source)
        # Decided from its own principals: a document with no chunks has no readable chunk.
        return found if found is not None and caller.may_read(found.principals) else None

    def chunk(self, chunk_id: str, *, caller: Caller = EVERYONE) -> Chunk | None:
        """A chunk by its id."""
        return self.chunks([chunk_id], caller=caller).get(chunk_id)

    def chunks(self, chunk_ids: Sequence[str], *, caller: Caller = EVERYONE) -> dict[str, Chunk]:
        """Chunks by id; unknown ids are absent."""
        return readable_chunks(self._store, caller, self._store.get_chunks(chunk_ids))

    def chunks_of(self, document_id: str, *, caller: Caller = EVERYONE) -> builtins.list[Chunk]:
        """A document's chunks in order."""
        if document_id not in readable_ids(self._store, caller, [document_id]):
            return []
        return self._store.chunks_of(document_id)

    def delete(self, id_or_source: str) -> bool:
        """Delete a document (by id or source) and everything derived from it."""
        document = self.get(id_or_source)
        return document is not None and self._store.delete(document.id)

    def stats(self, *, caller: Caller = EVERYONE) -> StoreStats:
        return readable_stats(self._store, caller, self._store.stats())

    def filter_warning(self, where: Filter | str) -> str | None:
        """Why a filter may match nothing: the fields it names that no chunk has (a misspelled
        ``sorce``), with the fields the index has; None when every field exists."""
        return missing_fields_warning(
            self._store, parse_filter(where) if isinstance(where, str) else where
        )

    @property
    def lookup(self) -> ChunkLookup:
        """Chunks by (document, index) position, for `NeighbourContext`; it also looks up
        documents (`DocumentLookup`), so gaps between neighbours are filled from the text."""
        return self._store

    @property
    def export(self) -> ChunkExport:
        """Every chunk page by page with its stored vector (exports and the connector)."""
        return self._store


def _filter(where: Filter | str | None) -> Filter | None:
    return parse_filter(where) if isinstance(where, str) else where
