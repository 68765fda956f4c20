"""A filter's matching chunk rows, found in PostgreSQL and kept in the serving process for the
next search with the same filter, brought up to date from the change log (`keyword_log`).

At a million chunks, finding a 1%-selective filter's 10,000 matches costs a bitmap heap scan
of some 3,000 pages (10-25 ms, most of a filtered search); the change log says which rows
were added, removed or had their metadata changed since a snapshot, so a later search reads
only those rows again: the matches are the kept ones less the rows changed, plus the changed
rows that match now, all in the search's own snapshot. Only filters on chunk metadata are
kept: a document's source and a caller's permissions live in other tables, which the log does
not follow. A log pruned past the kept snapshot, or another log (the collection made again),
and the filter is evaluated whole again.

Each answer also names the vector column it was read in (`Generation`, for `vector_cache`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from psycopg import sql

from ragwright.filters import DOCUMENT_FIELDS, And, Comparison, Exists, Filter, In, Not, Or
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.keyword_cache import parsed
from ragwright.stores.postgres.keyword_log import PRUNED_SETTING, Position
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection

#: Filters whose matches are kept (the most recently used; a 1% filter at 1M chunks: 80 KB).
_KEPT_FILTERS = 256
#: Matches kept per filter at most (a filter matching more is evaluated each time).
_KEEP_ROWS = 200_000
#: Changed rows past which the filter is evaluated whole rather than on the changed rows.
_REREAD = 20_000

#: The chunks table and vector column, the snapshot and the log.
_HEAD = (
    "SELECT to_regclass({table})::oid::bigint, (SELECT a.attnum FROM pg_attribute a "
    "  WHERE a.attrelid = to_regclass({table}) AND a.attname = 'embedding' "
    "  AND NOT a.attisdropped), "
    "pg_current_snapshot()::text, to_regclass({log})::oid::bigint, "
)
#: Every match (at most ``limit`` + 1).
_ALL = _HEAD + (
    "(SELECT string_agg(m.row_id::text, ',') FROM "
    "  (SELECT c.row_id FROM {s}.chunks c WHERE {where} LIMIT %s) m)"
)
#: The rows changed since a snapshot, whether the log still holds all of them, and which of
#: them match now.
_CHANGED = (
    "WITH t AS MATERIALIZED (SELECT DISTINCT x.row_id FROM {s}.chunk_changes x "
    "  WHERE x.xid >= pg_snapshot_xmin({since}::pg_snapshot) "
    "  AND NOT pg_visible_in_snapshot(x.xid, {since}::pg_snapshot)) "
    + _HEAD
    + "coalesce((SELECT value::xid8 FROM {s}.settings WHERE key = {pruned}) "
    "  >= pg_snapshot_xmin({since}::pg_snapshot), false), "
    "(SELECT count(*) FROM t), (SELECT string_agg(row_id::text, ',') FROM t), "
    "(SELECT string_agg(c.row_id::text, ',') FROM {s}.chunks c "
    "  WHERE c.row_id IN (SELECT row_id FROM t) AND {where})"
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


@dataclass(frozen=True, slots=True)
class _Kept:
    at: Position
    row_ids: RowIds


class FilterMatches:
    """One collection's kept filter matches in this process. Safe to share between threads."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    def matches(
        self,
        conn: Connection[Any],
        where: Filter,
        condition: sql.Composable,
        params: list[object],
        limit: int,
    ) -> Matches:
        """The rows matching ``where`` (compiled: ``condition`` with ``params``) in ``conn``'s
        snapshot, at most ``limit`` (one round trip)."""
        key = repr(where) if _on_metadata(where) else None
        kept = None if key is None else self._get(key)
        if kept is not None:
            found = self._changed(conn, kept, condition, params)
            if found is not None:
                return self._keep(key, *found, limit)
        row = conn.execute(self._statement(_ALL, condition), [*params, limit + 1]).fetchone()
        assert row is not None
        return self._keep(key, row, np.sort(parsed(row[4], np.int64)), limit)

    def _changed(
        self, conn: Connection[Any], kept: _Kept, condition: sql.Composable, params: list[object]
    ) -> tuple[Any, RowIds] | None:
        """The head row and the matches from ``kept`` and the rows changed since it; None
        when the log cannot say (pruned past it, or another log) or changed too much."""
        since = sql.Literal(kept.at.snapshot)
        statement = self._statement(_CHANGED, condition, since=since)
        row = conn.execute(statement, params).fetchone()
        assert row is not None
        if int(row[3] or 0) != kept.at.log or row[4] or int(row[5]) > _REREAD:
            return None
        changed = parsed(row[6], np.int64)
        if not changed.size:
            return row, kept.row_ids
        still = kept.row_ids[~np.isin(kept.row_ids, changed)]
        return row, np.union1d(still, parsed(row[7], np.int64))

    def _keep(self, key: str | None, row: Any, row_ids: RowIds, limit: int) -> Matches:
        """The answer from a head row and the matches; kept under ``key`` when they are few."""
        few = row_ids if row_ids.size <= limit else None
        if key is not None and few is not None and few.size <= _KEEP_ROWS:
            with self._lock:
                self._kept[key] = _Kept(Position(str(row[2]), int(row[3] or 0)), few)
                self._kept.move_to_end(key)
                while len(self._kept) > _KEPT_FILTERS:
                    self._kept.popitem(last=False)
        generation = None if row[1] is None else Generation(int(row[0]), int(row[1]))
        return Matches(generation, few)

    def _get(self, key: str) -> _Kept | None:
        with self._lock:
            return self._kept.get(key)

    def _statement(self, text: str, condition: sql.Composable, **more: Any) -> sql.Composed:
        return sql.SQL(text).format(
            s=self._db.identifier,
            where=condition,
            table=sql.Literal(f"{self._db.schema}.chunks"),
            log=sql.Literal(f"{self._db.schema}.chunk_changes"),
            pruned=sql.Literal(PRUNED_SETTING),
            **more,
        )


def _on_metadata(where: Filter) -> bool:
    """Whether ``where`` reads only the chunks' own metadata (which the log follows)."""
    match where:
        case And(operands) | Or(operands):
            return all(_on_metadata(o) for o in operands)
        case Not(operand):
            return _on_metadata(operand)
        case Comparison(field) | In(field) | Exists(field):
            return field not in DOCUMENT_FIELDS
    return False
