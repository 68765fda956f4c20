"""A filter's matching chunk rows in a search's own snapshot: from the metadata index held in
the serving process (`metadata_index`) when it can say, else evaluated in PostgreSQL.

The index answers any filter on the chunks' own metadata, seen before or not, in the round
trip that brings it to the search's snapshot; a filter on a document's source or a caller's
permissions (other tables, which the change log does not follow), a search before the index
is loaded, or an index over its budget, and PostgreSQL evaluates the filter (at a million
chunks a 1%-selective filter's matches are a bitmap heap scan of ~3,000 pages: 10-40 ms).

Each answer also names the vector column it was read in (`Generation`, for `vector_cache`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

from ragwright.filters import Filter
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.keyword_cache import parsed
from ragwright.stores.postgres.metadata_index import HEAD, MetadataIndex
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection

#: Every match (at most ``limit`` + 1), in SQL.
_ALL = HEAD + (
    ", (SELECT string_agg(m.row_id::text, ',') FROM "
    "  (SELECT c.row_id FROM {s}.chunks c WHERE {where} LIMIT %s) m)"
)


@dataclass(frozen=True, slots=True)
class Generation:
    """Which vectors a row id names: the chunks table's oid and its vector column's number."""

    table: int
    column: int


@dataclass(frozen=True, slots=True)
class Matches:
    """A filter's matching rows in one snapshot, sorted (None: more than the limit asked),
    and the vector column they were read with (None: no vectors yet)."""

    generation: Generation | None
    row_ids: RowIds | None


class FilterMatches:
    """One collection's filter evaluation, with its metadata index (None: every filter in
    SQL). Safe to share between threads."""

    def __init__(self, db: SchemaDatabase, index: MetadataIndex | None) -> None:
        self._db = db
        self.index = index
        #: Filters evaluated in SQL so far (the index could not say): what a benchmark or a
        #: test reads to tell the two apart.
        self.in_sql = 0

    def matches(
        self,
        conn: Connection[Any],
        where: Filter,
        condition: sql.Composable,
        params: list[object],
        limit: int,
    ) -> Matches:
        """The rows matching ``where`` (compiled: ``condition`` with ``params``) in ``conn``'s
        snapshot, at most ``limit`` (one round trip; two when the index had to give up)."""
        found = None if self.index is None else self.index.matching(conn, where)
        if found is None:
            self.in_sql += 1
            statement = sql.SQL(_ALL).format(
                s=self._db.identifier,
                where=condition,
                table=sql.Literal(f"{self._db.schema}.chunks"),
                log=sql.Literal(f"{self._db.schema}.chunk_changes"),
            )
            row = conn.execute(statement, [*params, limit + 1]).fetchone()
            assert row is not None
            found = (row, np.sort(parsed(row[4], np.int64)))
        head, row_ids = found
        generation = None if head[1] is None else Generation(int(head[0]), int(head[1]))
        return Matches(generation, row_ids if row_ids.size <= limit else None)
