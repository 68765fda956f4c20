"""One PostgreSQL database as a ragwright index: a connection pool, its collections, retries.

`PostgresBackend` is what the ``ragwright.stores`` entry point ``postgresql`` names: built from
a URL, it owns one connection pool that every store it opens shares. Each collection is one
PostgreSQL schema (``ragwright_<name>``, see `schema`); the LLM records of the index live in the
schema ``ragwright``.

Every operation runs as one transaction through `PostgresBackend.run`. A transient failure — the
connection dropped, the server restarting, a deadlock or serialization failure, no connection
free in time — rolls the transaction back and runs the whole of it again, with backoff, until
``retry_seconds`` have passed; then a `StoreError` says the server is unreachable. A write is
therefore either wholly applied or not at all, and writes are idempotent (a document replaces
the one with its id or source), so running one again after an unknown outcome is safe.

psycopg, psycopg-pool and pgvector are imported when a backend is built: without the
``postgres`` extra, construction raises `MissingDependencyError` with the pip line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ragwright.errors import (
    ConfigError,
    MissingDependencyError,
    RepairRefused,
    StoreError,
    StoreUnavailable,
)
from ragwright.models import DEFAULT_COLLECTION, IndexReport, RepairReport
from ragwright.stores import display_location
from ragwright.stores.postgres.connections import LOCK_NAMESPACE, lock_schema
from ragwright.stores.postgres.options import PostgresOptions, check_hnsw
from ragwright.stores.postgres.schema import INDEX_SCHEMA, collection_name, schema_name
from ragwright.stores.setting_rows import broken_keys

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

    from ragwright.stores.postgres.llm import PostgresLLMRecords
    from ragwright.stores.postgres.setting_repair import SpaceOf
    from ragwright.stores.postgres.store import PostgresStore

T = TypeVar("T")
INSTALL = "pip install 'ragwright[postgres]'"
_DEFAULTS = PostgresOptions()


def _require_driver() -> None:
    try:
        import pgvector.psycopg  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as error:
        raise MissingDependencyError("the PostgreSQL store", INSTALL) from error


def normalize_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` URLs, as libpq reads them: the scheme spelled
    ``postgresql``, the rest as written (re-joining the parts would drop the ``//`` of a URL
    with no host, ``postgresql:///db?host=/socket/dir``, which libpq then refuses)."""
    scheme, colon, rest = url.partition(":")
    if not colon or scheme.lower() not in ("postgresql", "postgres") or not rest.startswith("//"):
        raise ConfigError(
            f"not a PostgreSQL URL: {display_location(url)} (expected postgresql://…)"
        )
    return f"postgresql:{rest}"


class PostgresBackend:
    """A ragwright index in one PostgreSQL database (with pgvector): its named collections.

    HNSW parameters apply to the collections this backend opens: ``hnsw_m`` and
    ``hnsw_ef_construction`` when a collection's vector index is built, ``hnsw_ef_search`` per
    query. ``exact_limit`` is the number of candidate rows up to which a vector search is exact
    (a small collection, or a selective filter) instead of going through the HNSW index.
    ``hnsw_build_memory_mb`` and ``hnsw_build_workers``: the memory and parallel workers of an
    HNSW build (`create_vector_index`, a re-chunk's swap). ``keyword_cache``: BM25 from the
    postings held in this process (`keyword_cache`), or, off, in SQL. ``vector_cache_mb``: the
    vectors filtered searches ranked, kept in this process up to that size (`vector_cache`);
    0: ranked in SQL. ``metadata_index_mb``: the chunks' metadata held in this process to
    evaluate filters, up to that size (`metadata_index`); 0: filters in SQL."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = _DEFAULTS.pool_size,
        retry_seconds: float = _DEFAULTS.retry_seconds,
        connect_timeout: float = _DEFAULTS.connect_timeout,
        hnsw_m: int = _DEFAULTS.hnsw_m,
        hnsw_ef_construction: int = _DEFAULTS.hnsw_ef_construction,
        hnsw_ef_search: int = _DEFAULTS.hnsw_ef_search,
        exact_limit: int = _DEFAULTS.exact_limit,
        hnsw_build_memory_mb: int = _DEFAULTS.hnsw_build_memory_mb,
        hnsw_build_workers: int = _DEFAULTS.hnsw_build_workers,
        keyword_cache: bool = _DEFAULTS.keyword_cache,
        vector_cache_mb: int = _DEFAULTS.vector_cache_mb,
        metadata_index_mb: int = _DEFAULTS.metadata_index_mb,
    ) -> None:
        _require_driver()
        from psycopg_pool import ConnectionPool

        self.url = normalize_url(url)
        self.display_url = display_location(self.url)
        for name, value in (("hnsw_m", hnsw_m), ("hnsw_ef_construction", hnsw_ef_construction),
                            ("hnsw_ef_search", hnsw_ef_search)):  # fmt: skip
            check_hnsw(name, value, "")
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        self.hnsw_ef_search = hnsw_ef_search
        self.exact_limit = exact_limit
        self.keyword_cache = keyword_cache
        self.vector_cache_mb = vector_cache_mb
        self.metadata_index_mb = metadata_index_mb
        self.hnsw_build_memory_mb = hnsw_build_memory_mb
        self.hnsw_build_workers = hnsw_build_workers
        self.retry_seconds = retry_seconds
        self._connect_timeout = connect_timeout
        self._ensure_pgvector()
        self._pool: ConnectionPool[Connection[Any]] = ConnectionPool(
            self.url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={
                "autocommit": True,
                "connect_timeout": max(1, round(connect_timeout)),
                "application_name": "ragwright",
            },
            configure=_configure,
            timeout=connect_timeout,
            name="ragwright",
            open=False,
        )
        self._pool.open(wait=False)

    @staticmethod
    def option_defaults() -> dict[str, Any]:
        """The ``[store.postgres]`` keys at their defaults."""
        return PostgresOptions().keywords()

    @staticmethod
    def options_from_table(table: Mapping[str, object], where: str) -> dict[str, Any]:
        """The keyword arguments a ``[store.postgres]`` table of ragwright.toml sets (see
        `ragwright.stores.postgres.options`); ``where`` names the table in errors."""
        return PostgresOptions.from_table(table, where).keywords()

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PostgresBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- collections --------------------------------------------------------------------------

    @property
    def location(self) -> str:
        """The database's URL, its password masked."""
        return self.display_url

    def open(
        self, collection: str = DEFAULT_COLLECTION, *, create: bool = True, read_only: bool = False
    ) -> PostgresStore:
        """The store of one collection; created (schema, tables) if missing and ``create``.
        ``read_only`` creates nothing; what a reader may write is the database role's
        business here (grant it SELECT only to make reads read-only for the server too)."""
        from ragwright.stores.postgres.store import PostgresStore

        return PostgresStore(self, collection, create=create and not read_only)

    def check(self, collection: str = DEFAULT_COLLECTION, *, quick: bool = False) -> IndexReport:
        """Counts, orphans, offsets and vectors of one collection (see `check_schema`);
        ``quick`` changes nothing here (PostgreSQL checks its own storage)."""
        from ragwright.stores.postgres.check import check_schema
        from ragwright.stores.postgres.database import SchemaDatabase

        if collection not in self.collections():
            self.open(collection, create=False).close()  # says what is missing
        findings, counts = check_schema(SchemaDatabase(self, schema_name(collection)))
        return IndexReport(self.location, collection, tuple(findings), counts)

    def repair(
        self, collection: str = DEFAULT_COLLECTION, *, space_of: SpaceOf | None = None
    ) -> RepairReport:
        """Restore, reset or drop the broken settings rows `check` found (see
        `setting_repair`); `RepairRefused` when anything else is wrong, before anything is
        written: PostgreSQL keeps its own storage sound, and damaged rows of chunks or postings
        are not derived from anything this collection still holds whole."""
        from ragwright.stores.postgres.database import SchemaDatabase
        from ragwright.stores.postgres.setting_repair import repair_settings

        before = self.check(collection)
        if before.ok:
            return RepairReport(before, before, ())
        refused = [f"{f.name}: {f.detail}" for f in before.findings if not (f.ok or f.repairable)]
        if refused:
            raise RepairRefused(f"{self.display_url} (collection {collection!r})", refused)
        keys = broken_keys(before.findings)
        actions = repair_settings(SchemaDatabase(self, schema_name(collection)), keys, space_of)
        return RepairReport(before, self.check(collection), tuple(actions))

    def collections(self) -> list[str]:
        """The collections of this index, by name."""
        rows = self.run(
            lambda conn: conn.execute(
                "SELECT n.nspname FROM pg_namespace n "
                "WHERE to_regclass(quote_ident(n.nspname) || '.settings') IS NOT NULL "
                "ORDER BY n.nspname"
            ).fetchall(),
            "listing the collections",
        )
        names = [collection_name(str(row[0])) for row in rows]
        found = sorted(name for name in names if name is not None)
        return sorted(found, key=lambda name: name != DEFAULT_COLLECTION)  # default first

    def create_collection(self, name: str) -> None:
        """Create an empty collection; `ConfigError` if there is one by that name."""
        schema_name(name)  # a bad name is refused first
        if name in self.collections():
            raise ConfigError(f"the collection {name!r} already exists in {self.display_url}")
        self.open(name, create=True).close()

    def drop_collection(self, name: str) -> bool:
        """Delete a collection with everything in it. True when it existed."""
        from psycopg import sql

        schema = schema_name(name)
        if name == DEFAULT_COLLECTION:
            raise ConfigError("the default collection cannot be dropped")
        if name not in self.collections():
            return False

        def drop(conn: Connection[Any]) -> bool:
            lock_schema(conn, schema)
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            return True

        return self.run(drop, f"dropping the collection {name!r}")

    def llm_records(self) -> PostgresLLMRecords:
        """The index's LLM ledger and response cache (shared by its collections)."""
        from ragwright.stores.postgres.llm import PostgresLLMRecords

        return PostgresLLMRecords(self)

    # -- transactions -------------------------------------------------------------------------

    def run(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work`` in one transaction on a pooled connection; run again from the start on a
        transient failure until ``retry_seconds`` pass. ``what`` names it in errors."""
        return self._retried(work, what, transaction=True)

    def read(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work`` on a pooled connection in autocommit mode, retried as `run` retries it:
        ``work`` begins and ends its own transaction, so it can send ``BEGIN`` with its first
        statement and ``COMMIT`` with its last (a read of two round trips instead of four).
        A transaction it leaves open on an error is rolled back."""
        return self._retried(work, what, transaction=False)

    def _retried(self, work: Callable[[Connection[Any]], T], what: str, transaction: bool) -> T:
        import psycopg
        from psycopg_pool import PoolTimeout

        deadline = time.monotonic() + self.retry_seconds
        delay = 0.05
        while True:
            try:
                with self._pool.connection() as conn:
                    if transaction:
                        with conn.transaction():
                            return work(conn)
                    return _closing_transaction(conn, work)
            except (psycopg.OperationalError, PoolTimeout) as error:
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailable(
                        f"{what} failed: the PostgreSQL server at {self.display_url} did not "
                        f"answer for {self.retry_seconds:g} s ({_first_line(error)}); check that "
                        "it is running and reachable"
                    ) from error
                self._pool.check()  # drop the pool's other connections to a lost server
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
            except psycopg.Error as error:
                raise StoreError(f"{what} failed: {_first_line(error)}") from error

    def _ensure_pgvector(self) -> None:
        """pgvector's extension in the database (the pool's connections need its types)."""
        import psycopg

        def ensure(conn: Connection[Any]) -> None:
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                return
            conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_NAMESPACE,))
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.errors.InsufficientPrivilege as error:
                raise StoreError(
                    f"the pgvector extension is not installed in {self.display_url} and this "
                    "user may not install it: ask an administrator to run "
                    "`CREATE EXTENSION vector` in the database"
                ) from error
            except psycopg.errors.FeatureNotSupported as error:
                raise StoreError(f"pgvector is not available on this server: {error}") from error

        try:
            with self.connect() as conn, conn.transaction():
                ensure(conn)
        except psycopg.Error as error:
            raise StoreError(
                f"cannot prepare {self.display_url} for ragwright: {_first_line(error)}"
            ) from error

    def connect(self) -> Connection[Any]:
        """A connection of its own (autocommit, outside the pool), for what holds one for
        long; a failure to connect is retried as `run` retries, then a `StoreError`."""
        import psycopg

        deadline = time.monotonic() + self.retry_seconds
        delay = 0.05
        while True:
            try:
                return psycopg.connect(
                    self.url,
                    autocommit=True,
                    connect_timeout=max(1, round(self._connect_timeout)),
                    application_name="ragwright",
                )
            except psycopg.OperationalError as error:
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailable(
                        f"cannot connect to PostgreSQL at {self.display_url}: {_first_line(error)}"
                    ) from error
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


def _closing_transaction(conn: Connection[Any], work: Callable[[Connection[Any]], T]) -> T:
    """``work(conn)``, and a rollback of the transaction it leaves open if it fails."""
    from psycopg.pq import TransactionStatus

    try:
        return work(conn)
    except BaseException:
        if conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            conn.rollback()
        raise


def _configure(conn: Connection[Any]) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


__all__ = ["INDEX_SCHEMA", "PostgresBackend"]
