"""One collection's schema on the backend's pool: what every part of `PostgresStore` runs
its statements through, as the SQLite store's parts share `Database`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from psycopg.sql import SQL, Composed, Identifier

from ragwright.errors import BrokenSetting, StoreError, UnknownCollection
from ragwright.stores.postgres.repairable import REPAIRS
from ragwright.stores.postgres.schema import collection_name
from ragwright.stores.setting_rows import checked

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.connections import Connections

T = TypeVar("T")
#: What a broken settings row's error says to do when `ragwright repair` cannot (`REPAIRS`).
POSTGRES_REMEDY = (
    "correct or delete the row in the collection's settings table (`ragwright repair` cannot "
    "restore this one; a deleted row reads as its default)"
)


class SchemaDatabase:
    """Statements over the schema ``schema``, each call one transaction of ``backend``
    (retried whole on a transient failure, see `Connections.run`)."""

    def __init__(self, backend: Connections, schema: str) -> None:
        self.backend = backend
        self.schema = schema
        self.identifier = Identifier(schema)
        self._statements: dict[str, Composed] = {}

    def sql(self, text: str) -> Composed:
        """``text`` with ``{s}`` naming the schema (composed once per text)."""
        statement = self._statements.get(text)
        if statement is None:
            statement = SQL(text).format(s=self.identifier)
            self._statements[text] = statement
        return statement

    def run(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work`` in one transaction; ``what`` names it in errors. `UnknownCollection` if
        the schema is gone (the collection was dropped, perhaps by another process)."""
        return self._named(self.backend.run, work, what)

    def read(self, work: Callable[[Connection[Any]], T], what: str) -> T:
        """``work``, which begins and ends its own transaction (`Connections.read`); as
        `run` otherwise."""
        return self._named(self.backend.read, work, what)

    def _named(
        self,
        runner: Callable[[Callable[[Connection[Any]], T], str], T],
        work: Callable[[Connection[Any]], T],
        what: str,
    ) -> T:
        from psycopg import errors

        try:
            return runner(work, what)
        except StoreError as error:
            if not isinstance(error.__cause__, errors.UndefinedTable | errors.InvalidSchemaName):
                raise
            raise UnknownCollection(
                f"{what} failed: the collection {collection_name(self.schema)!r} was dropped "
                "meanwhile"
            ) from error

    def query(self, statement: str | Composed, params: Sequence[object] = ()) -> list[Any]:
        """The rows of one statement (``str``: composed by `sql`)."""
        composed = self.sql(statement) if isinstance(statement, str) else statement
        return self.run(lambda conn: conn.execute(composed, params).fetchall(), "reading the index")

    def setting(self, conn: Connection[Any], key: str) -> str | None:
        """A setting, read in ``conn``'s transaction; `BrokenSetting` for a value its row's
        rule refuses (`setting_rows`)."""
        row = conn.execute(
            self.sql("SELECT value FROM {s}.settings WHERE key = %s"), (key,)
        ).fetchone()
        return self.checked(str(row[0]) if row else None, key)

    def checked(self, raw: str | None, key: str) -> str | None:
        """The setting ``key`` read as ``raw``: `BrokenSetting` for a value its row's rule
        refuses (`setting_rows`)."""
        remedy = BrokenSetting.REMEDY if key in REPAIRS else POSTGRES_REMEDY
        return checked(self.backend.display_url, key, raw, remedy)
