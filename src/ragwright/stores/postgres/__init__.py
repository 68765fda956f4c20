"""The PostgreSQL + pgvector store (extra ``postgres``): ``--index postgresql://…``.

`PostgresBackend` is one database holding named collections (one PostgreSQL schema each);
``backend.open(name)`` gives a collection's `PostgresStore` (in ``.store``), and
``backend.llm_records()`` the index's LLM ledger and response cache. Importing this package
needs no driver: psycopg is imported when a backend is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.backend import PostgresBackend

if TYPE_CHECKING:
    from ragwright.stores.postgres.store import PostgresStore

__all__ = ["PostgresBackend", "connect"]


def connect(
    url: str, collection: str = "default", *, create: bool = True, **options: Any
) -> PostgresStore:
    """One collection's store on a backend of its own, closed with the store (``options``
    go to `PostgresBackend`). Picklable as ``functools.partial(connect, url)``, so another
    process can open the same collection."""
    from ragwright.stores.postgres.store import PostgresStore

    backend = PostgresBackend(url, **options)
    try:
        return PostgresStore(backend, collection, create=create, owns_backend=True)
    except BaseException:
        backend.close()
        raise
