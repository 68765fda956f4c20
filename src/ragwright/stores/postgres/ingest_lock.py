"""One ingest run at a time per collection of a PostgreSQL index, across processes and hosts.

The lock is a session-level advisory lock keyed by the collection's schema, held on a
connection of its own for the whole run (a pooled one would go back to the pool, lock and all,
after the first transaction). As with the SQLite store's file lock (`ragwright.stores.
ingest_lock`), a second run calls ``waiting`` and then waits for the first, however long it
takes, and is then a no-op for what the first wrote; searches never take the lock. The server
releases it when its holder's connection ends, so a run that crashes or is killed frees it.
If the connection is lost mid-run the lock is lost with it: the run goes on (its writes are
whole documents, each in one transaction, so a concurrent run is correct, only redundant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from ragwright.errors import StoreError

if TYPE_CHECKING:
    from ragwright.stores.postgres.connections import Connections

#: The first key of the two-key advisory locks of ingest runs: a key space apart from the
#: schema-change locks (`connections.LOCK_NAMESPACE`), which are transaction-level on other keys.
INGEST_NAMESPACE = 0x7269  # "ri"


@contextmanager
def ingest_lock(
    backend: Connections, schema: str, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the ingest lock of the collection in ``schema``, calling ``waiting`` first if
    another run holds it; `StoreError` if the server cannot be reached or fails meanwhile."""
    import psycopg

    key = (INGEST_NAMESPACE, schema)
    what = f"the ingest lock of {schema}"
    with backend.connect() as conn:
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", key).fetchone()
            if not (row and row[0]):
                if waiting is not None:
                    waiting()
                conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", key)
        except psycopg.Error as error:
            first = str(error).strip().splitlines()
            raise StoreError(f"taking {what} failed: {first[0] if first else error!r}") from error
        try:
            yield
        finally:
            with suppress(psycopg.Error):  # if the connection is gone, so is the lock
                conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
