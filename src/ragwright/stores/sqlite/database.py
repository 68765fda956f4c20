"""One SQLite connection shared by a store's threads: write transactions that bump the write
generation other processes watch, read snapshots tagged with it, and errors as `StoreError`
(`IndexDamaged` when SQLite finds the file corrupt or not a database)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragwright.errors import BrokenSetting, ConfigError, IndexDamaged, StoreError
from ragwright.stores.sqlite.table_headers import HEADER_ID_FUNCTION
from ragwright.stores.table_headers import header_id

NOT_TEXT = "text with a lone surrogate cannot be stored or looked up (it is not valid Unicode)"
#: How much of the file reads see through a memory map instead of copying each page out
#: (SQLite's ``mmap_size``): 10 SciFact rows by row id in 0.069 ms against 0.097, right after
#: a vector product (ad hoc). Writes still go through the file; the rest of a larger file is
#: read as before.
MAPPED_BYTES = 256 * 2**20
#: The write generation (`Database.transaction` bumps it): a subquery a read may add.
GENERATION = "SELECT value FROM meta WHERE key = 'generation'"
#: SQLite's primary result codes for a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)


def store_error(error: sqlite3.Error, path: Path, what: str) -> StoreError:
    """``error`` as ragwright's error: `IndexDamaged` when SQLite found the file damaged or
    not a database (the message sends the user to `ragwright check`), else `StoreError`."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code in _DAMAGE_CODES:
        return IndexDamaged(str(path), str(error))
    return StoreError(f"{what}: {error}")


def _header_id_or_null(header: object) -> str | None:
    return header_id(header) if isinstance(header, str) else None


class Database:
    """The connection to one index file (WAL mode). Safe to share between threads: every use
    holds ``lock``, a re-entrant lock, so a snapshot and the reads inside it are one unit."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL", read_only: bool = False) -> None:
        """Open ``path``; ``read_only`` opens it with SQLite's ``mode=ro``, so nothing this
        connection does can write the file (a damaged or foreign file stays as it was)."""
        self.path = path
        self.read_only = read_only
        self.lock = threading.RLock()
        #: Run inside every write transaction before it commits (the store prunes its log).
        self.before_commit: Callable[[sqlite3.Connection], object] | None = None
        target = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
        try:
            self.connection = sqlite3.connect(
                target, uri=read_only, isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as error:
            raise store_error(error, path, f"cannot open the index at {path}") from error
        try:
            if not read_only:  # a read-only connection uses the mode the file records
                self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute(f"PRAGMA synchronous={synchronous}")  # NORMAL or FULL
            self.connection.execute("PRAGMA foreign_keys=ON")
            self.connection.execute(f"PRAGMA mmap_size={MAPPED_BYTES}")
            # What the upgrade to stored table headers addresses the moved headers with.
            self.connection.create_function(
                HEADER_ID_FUNCTION, 1, _header_id_or_null, deterministic=True
            )
        except sqlite3.Error as error:
            self.connection.close()
            raise store_error(error, path, f"cannot open the index at {path}") from error

    def names(self) -> set[str]:
        """The names of the tables, views and triggers in the file (none: an empty file)."""
        rows = self.query("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        return {str(row[0]) for row in rows}

    def close(self) -> None:
        with self.lock:
            self.connection.close()

    def query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self.lock:
            try:
                return self.connection.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as error:
                raise store_error(error, self.path, "index query failed") from error
            except UnicodeEncodeError as error:
                raise ConfigError(NOT_TEXT) from error

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that also bumps the generation readers watch."""
        with self.lock:
            db = self.connection
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                what = f"cannot write to the index at {self.path}"
                raise store_error(error, self.path, what) from error
            try:
                yield db
                if self.before_commit is not None:
                    self.before_commit(db)
                db.execute(
                    "INSERT INTO meta(key, value) VALUES ('generation', '1') "
                    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
                db.execute("COMMIT")
            except sqlite3.Error as error:
                self._rollback()
                raise store_error(error, self.path, "writing to the index failed") from error
            except UnicodeEncodeError as error:
                self._rollback()
                raise ConfigError(NOT_TEXT) from error
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (e.g. on a full disk).
        if self.connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # a damaged file: keep the first error
                self.connection.execute("ROLLBACK")

    @contextmanager
    def read_snapshot(self) -> Iterator[int]:
        """A read transaction: everything read inside sees one committed state of the index,
        tagged with its write generation. Hold ``lock`` around it."""
        db = self.connection
        try:
            db.execute("BEGIN")
            row = db.execute(GENERATION).fetchone()
        except sqlite3.Error as error:
            self._end_read()
            what = f"cannot read the index at {self.path}"
            raise store_error(error, self.path, what) from error
        try:
            yield generation_of(self.path, row)
        except sqlite3.Error as error:
            raise store_error(error, self.path, "reading the index failed") from error
        except UnicodeEncodeError as error:
            raise ConfigError(NOT_TEXT) from error
        finally:
            self._end_read()

    def generation(self) -> int:
        """The write generation now, in one statement of its own (no snapshot): a read that
        returns the generation beside its rows is of this state when the two are equal."""
        rows = self.query(GENERATION)
        return generation_of(self.path, rows[0] if rows else None)

    def _end_read(self) -> None:
        """End a read snapshot. Nothing was written, so there is nothing to lose; a failure
        here (a damaged file) must not replace the error that is already on its way."""
        for statement in ("COMMIT", "ROLLBACK"):
            if not self.connection.in_transaction:
                return
            with contextlib.suppress(sqlite3.Error):
                self.connection.execute(statement)


def generation_of(path: Path, row: tuple[object, ...] | None) -> int:
    """The write generation a ``meta`` row holds (0: none yet); `BrokenSetting` for one
    that is not a whole number."""
    if row is None:
        return 0
    raw = str(row[0])
    if not raw.isdigit():
        raise BrokenSetting(str(path), "generation", f"{raw[:40]!r} is not a whole number")
    return int(raw)
