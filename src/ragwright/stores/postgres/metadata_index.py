"""The chunks' metadata held in the serving process (`metadata_segment`), so a filter it has
never seen is evaluated here instead of PostgreSQL reading every matching row's page: at a
million chunks a 1%-selective filter's 10,000 matches lie on ~3,000 pages (10 ms quiet, 25-40
ms on a busy server).

A state of the index is the metadata as of one snapshot: segments of rows, each with the rows
still live in it. A search brings it to its own snapshot in one round trip, from the change log
(`keyword_log`): every row the log names since the state's snapshot is dead in the state's
segments, and the ones that exist now make one more segment, read in that snapshot (a row's
metadata updated in place is logged as removed and added, so it is read again too). The state
must be one the search's snapshot contains (`_within`): a state kept by a newer search is
left alone and the filter evaluated in SQL. A log pruned past the state's snapshot, another
log or chunks table (the collection made again), or more changed rows than `_REREAD`, and the
index is loaded again in the background; so it is when segments pile up (`_compact`). Searches
meanwhile, and before the first load is done, evaluate the filter in SQL.

The first filtered search starts the load (one pass of PostgreSQL over every chunk's metadata,
grouped by key and value). Past ``budget_bytes`` it is dropped and not tried again in this
process: filters then go to SQL as before. So does a collection with a row whose metadata is
not a JSON object (ragwright writes none; ``?`` and ``@>`` mean other things on arrays).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from ragwright.errors import StoreError
from ragwright.filters import Filter
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.keyword_cache import parsed
from ragwright.stores.postgres.keyword_log import PRUNED_SETTING, Position
from ragwright.stores.postgres.metadata_columns import parsed_value
from ragwright.stores.postgres.metadata_segment import Group, MetadataSegment, answerable
from ragwright.stores.row_slots import RowIds

if TYPE_CHECKING:
    from psycopg import Connection

log = logging.getLogger(__name__)

#: Changed rows a search reads at most to bring the index to its snapshot (more: loaded again).
_REREAD = 20_000
#: Segments past which, or rows outside the first segment past an eighth of it (and this
#: many), the index is loaded again in the background, as one segment.
_MOST_SEGMENTS = 8
_FEW_ROWS = 1000
#: Groups read per fetch in a whole load.
_GROUPS_PER_FETCH = 2000
#: Estimated bytes per group beyond its rows (its value as a Python object, dict entries).
_GROUP_BYTES = 300

#: The chunks table, its vector column, the snapshot and the log: what every answer starts
#: with (`filter_matches` names the vectors with the first two).
HEAD = (
    "SELECT to_regclass({table})::oid::bigint, (SELECT a.attnum FROM pg_attribute a "
    "  WHERE a.attrelid = to_regclass({table}) AND a.attname = 'embedding' "
    "  AND NOT a.attisdropped), "
    "pg_current_snapshot()::text, to_regclass({log})::oid::bigint"
)
#: Each (key, JSON type, value, rows) of the metadata of the rows ``r`` (a value as text for
#: strings, numbers and booleans; the other types by type alone).
_GROUPS = (
    "SELECT e.key, jsonb_typeof(e.value), CASE jsonb_typeof(e.value) "
    "  WHEN 'string' THEN e.value #>> ARRAY[]::text[] WHEN 'number' THEN e.value::text "
    "  WHEN 'boolean' THEN e.value::text END, string_agg(r.row_id::text, ',') "
    "FROM {rows} r, jsonb_each(r.metadata) e WHERE jsonb_typeof(r.metadata) = 'object' "
    "GROUP BY 1, 2, 3"
)
#: A whole load's head: the chunks' row ids, and how many have metadata that is no object.
_LOAD = (
    HEAD + ", (SELECT count(*) FROM {s}.chunks WHERE jsonb_typeof(metadata) <> 'object'), "
    "(SELECT string_agg(row_id::text, ',') FROM {s}.chunks)"
)
#: The rows the log names since a snapshot (``t``), whether it still holds all of them and
#: how many they are, and of those that exist now (at most `_REREAD`): their ids, how many
#: have metadata that is no object, and their metadata's groups.
_CATCH_UP = (
    "WITH t AS MATERIALIZED (SELECT DISTINCT x.row_id FROM {s}.chunk_changes x "
    "  WHERE x.xid >= pg_snapshot_xmin({since}::pg_snapshot) "
    "  AND NOT pg_visible_in_snapshot(x.xid, {since}::pg_snapshot)), "
    "n AS MATERIALIZED (SELECT count(*) AS changed FROM t), "
    "r AS MATERIALIZED (SELECT c.row_id, c.metadata FROM {s}.chunks c "
    "  WHERE c.row_id IN (SELECT row_id FROM t) AND (SELECT changed FROM n) <= {most}), "
    "g (key, kind, value, rows) AS MATERIALIZED ("
    + _GROUPS.replace("{rows}", "r")
    + ") "
    + HEAD
    + ", coalesce((SELECT value::xid8 FROM {s}.settings WHERE key = {pruned}) "
    "  >= pg_snapshot_xmin({since}::pg_snapshot), false), (SELECT changed FROM n), "
    "(SELECT string_agg(row_id::text, ',') FROM t WHERE (SELECT changed FROM n) <= {most}), "
    "(SELECT string_agg(row_id::text, ',') FROM r), "
    "(SELECT count(*) FROM r WHERE jsonb_typeof(metadata) <> 'object'), "
    "(SELECT array_agg(ARRAY[key, kind, value, rows]) FROM g)"
)


@dataclass(frozen=True, slots=True)
class _Part:
    """A segment and which of its rows are live (None: all)."""

    segment: MetadataSegment
    live: npt.NDArray[np.bool_] | None

    def without(self, row_ids: RowIds) -> _Part | None:
        """The part with ``row_ids`` dead (None: none left)."""
        held = self.segment.row_ids
        at = np.searchsorted(held, row_ids)
        inside = at < held.size
        inside[inside] = held[at[inside]] == row_ids[inside]
        if not inside.any():
            return self
        live = np.ones(held.size, dtype=bool) if self.live is None else self.live.copy()
        live[at[inside]] = False
        return _Part(self.segment, live) if live.any() else None


@dataclass(frozen=True, slots=True)
class IndexState:
    """The metadata as of ``at``, of the chunks table ``table``."""

    at: Position
    table: int
    parts: tuple[_Part, ...]

    def matching(self, where: Filter) -> RowIds | None:
        """The row ids matching ``where``, sorted; None when part of it is left to SQL."""
        found = []
        for part in self.parts:
            slots = part.segment.matching(where)
            if slots is None:
                return None
            if part.live is not None:
                slots = slots[part.live[slots]]
            found.append(part.segment.row_ids[slots])
        if len(found) == 1:
            return found[0]
        return np.sort(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)

    def changed(self, at: Position, touched: RowIds, now: MetadataSegment) -> IndexState:
        """The state at ``at``: the rows ``touched`` since dead, those in ``now`` added."""
        parts = []
        for part in self.parts:
            kept = part.without(touched)
            if kept is not None:
                parts.append(kept)
        if now.row_ids.size:
            parts.append(_Part(now, None))
        return IndexState(at, self.table, tuple(parts))

    @property
    def nbytes(self) -> int:
        live = sum(0 if p.live is None else p.live.nbytes for p in self.parts)
        return live + sum(p.segment.nbytes for p in self.parts)


class MetadataIndex:
    """One collection's metadata index in this process. Safe to share between threads."""

    def __init__(self, db: SchemaDatabase, budget_bytes: int) -> None:
        self._db = db
        self._budget = budget_bytes
        self._lock = threading.Lock()
        self._state: IndexState | None = None
        self._loader: threading.Thread | None = None
        #: Set when a load found the index past the budget, or metadata it cannot hold.
        self._refused = False

    def wait(self) -> None:
        """Wait for a load running in the background (tests, benchmarks)."""
        loader = self._loader
        if loader is not None:
            loader.join()

    def matching(self, conn: Connection[Any], where: Filter) -> tuple[Any, RowIds] | None:
        """The head row (`HEAD`) and the row ids matching ``where`` in ``conn``'s snapshot
        (its transaction begun), in one round trip; None when the index cannot say (the
        caller evaluates ``where`` in SQL)."""
        state = self._state
        if not answerable(where):
            return None
        if state is None:
            self._load()
            return None
        row = conn.execute(self._catch_up_statement(state.at)).fetchone()
        assert row is not None
        current = self._caught_up(state, row)
        if current is None:
            return None
        if current is not state:
            with self._lock:
                if self._state is state:
                    self._state = current
            if _compact(current) or current.nbytes > self._budget:
                self._load()
        found = current.matching(where)
        return None if found is None else (row, found)

    def _caught_up(self, state: IndexState, row: Any) -> IndexState | None:
        """``state`` brought to the snapshot of the catch-up ``row``; None when it cannot
        be (and a load is started where another would help)."""
        at = Position(str(row[2]), int(row[3] or 0))
        if not _within(state.at.snapshot, at.snapshot):  # a newer search's state
            return None
        if at.log != state.at.log or int(row[0] or 0) != state.table or row[4]:
            self._load()  # the collection made again, or the log pruned past the state
            return None
        if int(row[5]) > _REREAD:
            self._load()
            return None
        if int(row[8] or 0):
            self._refuse("a chunk's metadata is not a JSON object")
            return None
        touched = np.sort(parsed(row[6], np.int64))
        if not touched.size:
            return state if at == state.at else IndexState(at, state.table, state.parts)
        now = np.sort(parsed(row[7], np.int64))
        return state.changed(at, touched, MetadataSegment.of(now, _groups(row[9] or ())))

    def _load(self) -> None:
        """Start loading the whole index in the background, unless a load runs or one was
        refused."""
        with self._lock:
            if self._refused or (self._loader is not None and self._loader.is_alive()):
                return
            self._loader = threading.Thread(
                target=self._loading, name="ragwright metadata index", daemon=True
            )
            self._loader.start()

    def _loading(self) -> None:
        try:
            loaded = self._db.run(self._everything, "loading the metadata index")
        except (StoreError, ValueError, MemoryError) as error:  # searches evaluate in SQL
            log.warning("loading the metadata index of %s failed: %s", self._db.schema, error)
            return
        if loaded is not None:
            with self._lock:
                self._state = loaded

    def _everything(self, conn: Connection[Any]) -> IndexState | None:
        """The whole index in one snapshot (None: refused)."""
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        head = conn.execute(self._statement(_LOAD)).fetchone()
        assert head is not None
        if int(head[4] or 0):
            self._refuse("a chunk's metadata is not a JSON object")
            return None
        row_ids = np.sort(parsed(head[5], np.int64))
        used, groups = row_ids.nbytes, []
        with conn.cursor(name="ragwright_metadata_index") as cursor:
            cursor.itersize = _GROUPS_PER_FETCH
            cursor.execute(self._statement(_GROUPS.replace("{rows}", "{s}.chunks")))
            for key, kind, value, rows in cursor:
                ids = parsed(rows, np.int64)
                used += 8 * ids.size + _GROUP_BYTES  # slots by value and by key, 4 bytes each
                if used > self._budget:
                    self._refuse(f"past its budget of {self._budget / 2**20:,.0f} MB")
                    return None
                groups.append((str(key), str(kind), parsed_value(str(kind), value), ids))
        segment = MetadataSegment.of(row_ids, groups)
        at = Position(str(head[2]), int(head[3] or 0))
        return IndexState(at, int(head[0] or 0), (_Part(segment, None),))

    def _refuse(self, why: str) -> None:
        log.info("the metadata index of %s is not held (%s): filters in SQL", self._db.schema, why)
        with self._lock:
            self._refused = True
            self._state = None

    def _catch_up_statement(self, since: Position) -> sql.Composed:
        return self._statement(_CATCH_UP, since=sql.Literal(since.snapshot))

    def _statement(self, text: str, **more: Any) -> sql.Composed:
        return sql.SQL(text).format(
            s=self._db.identifier,
            table=sql.Literal(f"{self._db.schema}.chunks"),
            log=sql.Literal(f"{self._db.schema}.chunk_changes"),
            pruned=sql.Literal(PRUNED_SETTING),
            most=sql.Literal(_REREAD),
            **more,
        )


def _groups(rows: Any) -> list[Group]:
    """The groups of a catch-up row's array of (key, type, value, row ids)."""
    return [
        (str(key), str(kind), parsed_value(str(kind), value), parsed(ids, np.int64))
        for key, kind, value, ids in rows
    ]


def _compact(state: IndexState) -> bool:
    """Whether the state's segments have piled up enough to load it again as one."""
    if len(state.parts) > _MOST_SEGMENTS:
        return True
    if not state.parts:  # every row deleted: nothing to compact
        return False
    outside = sum(p.segment.row_ids.size for p in state.parts[1:])
    return outside > max(_FEW_ROWS, state.parts[0].segment.row_ids.size // 8)


def _within(earlier: str, later: str) -> bool:
    """Whether snapshot ``later`` sees every transaction that ``earlier`` sees: true when
    ``earlier`` was taken first. A transaction ``earlier`` sees is below its xmax and not in
    its list of running ones; ``later`` sees it too when ``later``'s xmax is no lower and
    every transaction ``later`` lists as running below ``earlier``'s xmax was running for
    ``earlier`` too."""
    _, early_xmax, early_running = _snapshot(earlier)
    _, late_xmax, late_running = _snapshot(later)
    return early_xmax <= late_xmax and all(
        x in early_running for x in late_running if x < early_xmax
    )


def _snapshot(text: str) -> tuple[int, int, frozenset[int]]:
    """A ``pg_snapshot``'s text, ``xmin:xmax:xip,...``."""
    xmin, xmax, running = text.split(":")
    return int(xmin), int(xmax), frozenset(int(x) for x in running.split(",") if x)
