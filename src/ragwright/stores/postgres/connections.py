"""What a collection's parts need of the database they run on: `Connections`, the narrow port
`PostgresBackend` implements, and the schema-change lock they all take.

The parts (the store, its schema, the LLM records, the ingest lock) depend on this module, not
on `backend`, which opens them: so the backend stays above them and nothing below imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from psycopg import Connection

T = TypeVar("T")
#: Two-key advisory locks (a key space apart from single-key ones) serialize schema changes.
LOCK_NAMESPACE = 0x7277  # "rw"


class Connections(Protocol):
    """A pool of connections to one database, with the settings of the collections on it
    (see `PostgresBackend` for what each means)."""

    display_url: str
    keyword_cache: bool
    vector_cache_mb: int
    metadata_index_mb: int
    exact_limit: int
    hnsw_m: int
    hnsw_ef_construction: int
    hnsw_ef_search: int
    hnsw_build_memory_mb: int
    hnsw_build_workers: int

    def run(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work`` in one transaction, retried whole on a transient failure."""
        ...

    def read(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work`` in autocommit mode (it begins and ends its own transaction), retried."""
        ...

    def connect(self) -> Connection[Any]:
        """A connection of its own, outside the pool, for what holds one for long."""
        ...

    def close(self) -> None: ...


def lock_schema(conn: Connection[Any], schema: str) -> None:
    """Serialize changes to one schema's structure across processes (until commit)."""
    conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_NAMESPACE, schema))


def has_column(conn: Connection[Any], schema: str, table: str, column: str) -> bool:
    """Whether ``schema.table`` has ``column`` (a collection made before the column may not)."""
    found = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = %s AND column_name = %s",
        (schema, table, column),
    ).fetchone()
    return found is not None
