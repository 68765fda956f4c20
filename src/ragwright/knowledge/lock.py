"""The collection's ingest lock, where the store has one."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from ragwright.ports import IngestLock


class IngestLocking:
    """One ingest run at a time per collection, where the store can serialize them (see
    `ragwright.ports.IngestLock`); elsewhere concurrent runs are correct, only slower."""

    def __init__(self, store: object) -> None:
        self._store = store if isinstance(store, IngestLock) else None

    def __call__(self, waiting: Callable[[], None] | None = None) -> AbstractContextManager[None]:
        if self._store is None:
            return nullcontext()
        return self._store.ingest_lock(waiting)
