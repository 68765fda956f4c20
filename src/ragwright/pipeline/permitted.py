"""Lookups as a caller may see them (see `ragwright.permissions`): a document, chunk or count
of a document the caller may not read is absent, never returned or counted.

Which documents are readable is asked of the store, in its own query (the `Readable` filter
node over the document ids at hand), so the answer is the one every search applies."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Protocol

from ragwright.errors import AccessDenied
from ragwright.filters import And, Filter, In
from ragwright.models import Chunk, DocumentInfo, StoreStats
from ragwright.permissions import Caller


class Listing(Protocol):
    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]: ...


def readable_ids(store: Listing, caller: Caller, document_ids: Iterable[str]) -> set[str]:
    """The ids among ``document_ids`` whose documents ``caller`` may read."""
    ids = sorted(set(document_ids))
    readable = caller.readable()
    if readable is None or not ids:
        return set(ids)
    found: set[str] = set()
    for start in range(0, len(ids), 500):  # within a filter's value limit
        where = And((In("document_id", tuple(ids[start : start + 500])), readable))
        found.update(info.id for info in store.list_documents(where))
    return found


def readable_chunks(store: Listing, caller: Caller, chunks: dict[str, Chunk]) -> dict[str, Chunk]:
    """``chunks`` less those of documents ``caller`` may not read."""
    if not caller.restricted:
        return chunks
    allowed = readable_ids(store, caller, (c.document_id for c in chunks.values()))
    return {key: c for key, c in chunks.items() if c.document_id in allowed}


def readable_stats(store: Listing, caller: Caller, stats: StoreStats) -> StoreStats:
    """``stats`` with the counts of what ``caller`` may read, and no size on disk (the
    whole index's size grows with every document; the space and schema stay: settings)."""
    if not caller.restricted:
        return stats
    listed = store.list_documents(caller.readable())
    return dataclasses.replace(
        stats,
        documents=len(listed),
        chunks=sum(info.chunk_count for info in listed),
        characters=sum(info.char_count for info in listed),
        database_bytes=None,
    )


def refuse_restricted(caller: Caller, what: str) -> None:
    """`AccessDenied` for a restricted caller asking for a view built from every document."""
    if caller.restricted:
        raise AccessDenied(
            f"{what} is built from every document, so a caller bound to principals cannot "
            "see it; search or ask instead (their results hold only what the caller may read)"
        )


def refuse_restricted_edit(caller: Caller, what: str) -> None:
    """`AccessDenied` for a restricted caller asking to change what is built from every
    document, before anything is looked up: whether the names it gives exist is not its to
    learn, so every such request gets the same answer."""
    if caller.restricted:
        raise AccessDenied(
            f"{what} changes what is built from every document, so a caller bound to "
            "principals may not do it; use a key bound to no principal"
        )


__all__ = [
    "readable_chunks",
    "readable_ids",
    "readable_stats",
    "refuse_restricted",
    "refuse_restricted_edit",
]
