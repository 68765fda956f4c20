"""Pruning ``chunk_changes``: the log the derived caches replay, cut back to what they still need.

Every chunk row a write adds or removes is one row of the log, so without pruning it grows with
every write ever made. A cache file beside the database records the last change it covers
(its ``seq``): the changes up to the oldest such file are needed by no file, and a write
deletes them in its own transaction. The boundary is recorded (``meta``: `PRUNED_SETTING`), so
a cache from before it, in a file or in another process's memory, is rebuilt rather than
replayed from an incomplete log (`behind_pruning`). The last change is always kept: its
``seq`` is the log's position (`last_change`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragwright.errors import BrokenSetting
from ragwright.stores.row_slots import RowIds
from ragwright.stores.sqlite.derived import read_header

#: ``meta`` key: the highest change ``seq`` deleted from the log (0: none).
PRUNED_SETTING = "chunk_changes_pruned_through"


def covered_by_files(files: Iterable[Path], key: str) -> int | None:
    """The oldest ``seq`` among this index's cache ``files`` that exist (None: there are
    none, so nothing may be pruned). Reads each file's header only."""
    oldest: int | None = None
    for path in files:
        seq = _file_seq(path, key)
        if seq is not None:
            oldest = seq if oldest is None else min(oldest, seq)
    return oldest


def prune(db: sqlite3.Connection, through: int) -> int:
    """Delete the changes up to ``through`` (not the last one), inside the caller's write
    transaction, and record the boundary. Returns how many were deleted."""
    last = db.execute("SELECT coalesce(max(seq), 0) FROM chunk_changes").fetchone()[0]
    through = min(through, int(last) - 1)
    if through <= pruned_through(db):
        return 0
    deleted = db.execute("DELETE FROM chunk_changes WHERE seq <= ?", (through,)).rowcount
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (PRUNED_SETTING, str(through)),
    )
    return int(deleted)


def pruned_through(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (PRUNED_SETTING,)).fetchone()
    if row is None:
        return 0
    if not str(row[0]).isdigit():
        raise BrokenSetting(None, PRUNED_SETTING, f"{str(row[0])[:40]!r} is not a whole number")
    return int(row[0])


def behind_pruning(db: sqlite3.Connection, seq: int) -> bool:
    """Whether a cache at ``seq`` needs changes the log no longer holds."""
    return seq < pruned_through(db)


def _file_seq(path: Path, key: str) -> int | None:
    found = read_header(path) or {}
    seq = found.get("seq")
    return seq if found.get("key") == key and isinstance(seq, int) else None


@dataclass(frozen=True)
class Changes:
    """What happened to chunk rows after ``since``, up to ``until`` (a change ``seq``): rows
    removed (slots to mask) and rows added (to read), net of rows added and removed again."""

    removed: RowIds
    added: RowIds
    until: int

    @property
    def size(self) -> int:
        return int(self.removed.size + self.added.size)


def last_change(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT coalesce(max(seq), 0) FROM chunk_changes").fetchone()
    return int(row[0])


def changes_since(db: sqlite3.Connection, since: int) -> Changes:
    """The net changes after ``since`` (call inside the read snapshot the cache serves)."""
    rows = db.execute(
        "SELECT seq, chunk_rowid, added FROM chunk_changes WHERE seq > ? ORDER BY seq", (since,)
    ).fetchall()
    removed: list[int] = []
    added: dict[int, None] = {}
    for _, rowid, was_added in rows:
        if was_added:
            added[rowid] = None
        elif rowid in added:
            del added[rowid]  # added and removed again since: nothing to do
        else:
            removed.append(rowid)
    until = int(rows[-1][0]) if rows else since
    return Changes(
        np.array(removed, dtype=np.int64), np.array(sorted(added), dtype=np.int64), until
    )


def pending_changes(db: sqlite3.Connection, since: int) -> int:
    """How many changes follow ``since`` (an upper bound of `changes_since(...).size`)."""
    return last_change(db) - since
