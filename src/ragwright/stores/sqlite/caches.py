"""Derived caches kept current: loaded from their file beside the database, caught up with
the writes since by replaying ``chunk_changes``, rebuilt when they cannot be trusted.

A cache file records the index it belongs to (a random key the index keeps in ``meta``), what
it was built with (the kind's signature: tokenizer, dimension) and the last change ``seq`` it
covers. Anything that does not match, or a file from the future of a restored database, is
ignored and rebuilt; one whose data fails its hashes is deleted and rebuilt. Deleting the file
only costs the rebuild.

A file is verified (`derived.Mapped.damage`, a hash per block) before any query reads it, once
per process: in the query that first needs it, or, for a kind with a fallback in a serving
store and a file over `VERIFIED_IN_QUERY`, in a background thread while the fallback answers
(BM25: FTS5; the graph: exact search; candidates: their rows). A kind that has a fallback is
built in a background thread with its own connection too, so a query never waits for it (a
store's builds from the database take turns); one without (vectors) is built in the query.
Once saved, a built cache is read from its file, as one opened later is.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

import numpy.typing as npt

from ragwright.errors import StoreError
from ragwright.freed_memory import release_freed_memory
from ragwright.stores.row_slots import RowIds, RowSlots
from ragwright.stores.sqlite import derived
from ragwright.stores.sqlite.change_log import behind_pruning, changes_since, last_change
from ragwright.stores.sqlite.database import generation_of

log = logging.getLogger(__name__)

#: Changes a query replays itself; beyond, a kind with a fallback catches up in the background.
REPLAY_IN_QUERY = 20_000
#: A file up to this size is verified in the query that first needs it (some 50 ms of
#: hashing); a larger one of a kind with a fallback is verified in the background.
VERIFIED_IN_QUERY = 64 * 2**20


class Derivable(Protocol):
    @property
    def rows(self) -> RowSlots: ...

    def extended(self, removed: RowIds, added: Self) -> Self: ...

    def compacted(self) -> Self: ...

    def arrays(self) -> dict[str, npt.NDArray[Any]]: ...


T = TypeVar("T", bound=Derivable)


@dataclass(frozen=True)
class CacheKind(Generic[T]):
    """How to build one kind of cache from the database."""

    suffix: str  # the file is DATABASE + suffix
    signature: dict[str, object]
    build: Callable[[sqlite3.Connection], T]  # everything, in one read transaction
    delta: Callable[[sqlite3.Connection, RowIds], T]  # just these rows
    from_arrays: Callable[[dict[str, npt.NDArray[Any]]], T]  # ValueError etc.: not usable
    has_fallback: bool


@dataclass(frozen=True)
class _Built(Generic[T]):
    value: T
    generation: int
    seq: int
    unsaved: int  # changes applied since the file was written
    mapped: derived.Mapped | None = None  # the file the value reads in place, if any


class DerivedCache(Generic[T]):
    """One derived cache of one store. Call `current` holding the store's database lock,
    inside the read snapshot it should reflect."""

    def __init__(
        self,
        database: Path,
        kind: CacheKind[T],
        key: str,
        *,
        background: bool,
        builds: threading.Lock | None = None,
    ) -> None:
        """A background build from the database holds ``builds`` (one lock for all of a
        store's caches) while it runs: at a million chunks each build holds gigabytes while it
        runs, and three at once took the process to 6.9 GB (docs/benchmarks.md); reading and
        verifying a file, or a catch-up from a cache already built, does not wait for it."""
        self.path = database.with_name(database.name + kind.suffix)
        self._database = database
        self._kind = kind
        self._meta = {"key": key, "kind": kind.suffix, **kind.signature}
        self._background = background and kind.has_fallback
        self._built: _Built[T] | None = None
        self._ready: _Built[T] | None = None  # handed over by the background thread
        self._worker: threading.Thread | None = None
        self._handover = threading.Lock()
        self._builds = builds or threading.Lock()

    def current(self, db: sqlite3.Connection, generation: int) -> T | None:
        """The cache as of ``generation``, or None while it is being built elsewhere (the
        caller uses its fallback)."""
        built = self._built
        if built is not None and built.generation == generation:
            return built.value
        with self._handover:
            if self._ready is not None:
                built, self._ready = self._ready, None
        if built is not None and behind_pruning(db, built.seq):
            built = None  # the log no longer holds its changes: the newer file, or a rebuild
        if built is None:
            if self._background and _size(self.path) > VERIFIED_IN_QUERY:
                self._start_worker()  # verified there, while the fallback answers
                return None
            built = self._from_file()
        last = last_change(db)
        if built is not None and (
            built.seq > last
            or last - built.seq > self._replay_limit(built)
            or behind_pruning(db, built.seq)
        ):
            built = None  # from another state of the index, or too far behind to replay
        if built is None:
            if self._background:
                self._start_worker()
                return None
            built = self._rebuilt(db, generation)
        built = self._caught_up(db, built, generation)
        self._built = built
        if built.unsaved > _compaction_threshold(built.value) and not self._working():
            if self._background:
                self._start_worker()
            else:
                self._built = self._saved(db, built, built.value.compacted())
        return self._built.value

    def at(self, generation: int) -> T | None:
        """The cache as the last query left it, when that was as of ``generation``; else None
        (`current` catches it up, inside a read snapshot). Reads nothing."""
        built = self._built
        return built.value if built is not None and built.generation == generation else None

    def release_pages(self) -> None:
        """Drop the pages searches read from this cache's file from the process's resident
        set (`derived.Mapped.release_pages`)."""
        built = self._built
        if built is not None and built.mapped is not None:
            built.mapped.release_pages()

    @property
    def latest(self) -> T | None:
        """The state the last query was served from (None before the first)."""
        return None if self._built is None else self._built.value

    def wait(self) -> None:
        """Wait for a background build or check (for tests and benchmarks)."""
        if self._worker is not None:
            self._worker.join()

    def _replay_limit(self, built: _Built[T]) -> int:
        """Beyond this many changes a rebuild is cheaper, or (with a fallback) not for a query."""
        if self._background:
            return REPLAY_IN_QUERY
        return max(REPLAY_IN_QUERY, built.value.rows.live_count)

    def _caught_up(self, db: sqlite3.Connection, built: _Built[T], generation: int) -> _Built[T]:
        changes = changes_since(db, built.seq)
        value = built.value
        if changes.size:
            added = self._kind.delta(db, changes.added)
            value = value.extended(changes.removed, added)
        return _Built(value, generation, changes.until, built.unsaved + changes.size, built.mapped)

    def _rebuilt(self, db: sqlite3.Connection, generation: int) -> _Built[T]:
        seq = last_change(db)
        value = self._kind.build(db)
        return self._saved(db, _Built(value, generation, seq, 0), value)

    def _saved(self, db: sqlite3.Connection, built: _Built[T], value: T) -> _Built[T]:
        """``value`` written to the cache's file, and served from the file from now on: the
        memory it was built in is freed (at a million chunks 1.5 GB of vectors, 0.5 GB of
        postings), and the process holds only the pages its searches read, as it does for a
        file it opened (`release_pages`)."""
        try:
            derived.write_arrays(self.path, {**self._meta, "seq": built.seq}, value.arrays())
        except OSError as error:  # a read-only directory: the cache lives in memory only
            log.warning("cannot write the derived cache %s: %s", self.path, error)
            return _Built(value, built.generation, built.seq, built.unsaved)
        mapped = derived.map_arrays(self.path)
        read = None if mapped is None else self._read(mapped)
        if read is None or read[1] != built.seq:  # replaced at once by another process's
            return _Built(value, built.generation, built.seq, 0)
        return _Built(read[0], built.generation, built.seq, 0, mapped)

    def _from_file(self) -> _Built[T] | None:
        """The cache from its file, memory-mapped, once every block of it has matched its
        hash (one pass over the data: at a million chunks 2 GB). A file that fails is
        deleted, so it is built again rather than checked again; a missing, older, foreign
        or stale one is left for the rebuild to replace."""
        mapped = derived.map_arrays(self.path)
        if mapped is None:
            return None
        damage = mapped.damage()
        if damage is not None:
            log.warning("the derived file %s is damaged (%s); building it again", self.path, damage)
            derived.remove_if_same(self.path, mapped)
            return None
        read = self._read(mapped)
        if read is None:
            return None
        value, seq = read
        return _Built(value, -1, seq, 0, mapped)

    def _read(self, mapped: derived.Mapped) -> tuple[T, int] | None:
        """The cache a mapped file holds and the change ``seq`` it covers; None for a file
        of another index or kind, or built with another signature."""
        meta = dict(mapped.meta)
        seq = meta.pop("seq", None)
        if meta != self._meta or not isinstance(seq, int):
            return None
        try:
            return self._kind.from_arrays(mapped.arrays), seq
        except (KeyError, ValueError, IndexError, TypeError, RuntimeError) as error:
            # Its hashes matched, so it was written so (RuntimeError: faiss refused it).
            log.warning(
                "the derived file %s cannot be used (%s); building it again", self.path, error
            )
            return None

    def _working(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def _start_worker(self) -> None:
        if self._working():
            return
        start = self._built
        self._worker = threading.Thread(
            target=self._work, args=(start,), name=f"ragwright {self._kind.suffix}", daemon=True
        )
        self._worker.start()

    def _work(self, start: _Built[T] | None) -> None:
        """Bring the cache up to date on a connection of its own, save it, hand it over:
        from the file when nothing is built yet (verified here, with no lock held), else
        from the database, only when no other build is running."""
        if start is None:
            start = self._from_file()
        with self._builds if start is None else contextlib.nullcontext():
            self._bring_up_to_date(start)
            # What the build read and let go of sits in this thread's malloc arena, which
            # glibc keeps (0.28 GB after the builds of a 60,000-chunk index).
            release_freed_memory()

    def _bring_up_to_date(self, start: _Built[T] | None) -> None:
        try:
            db = sqlite3.connect(f"file:{self._database}?mode=ro", uri=True, timeout=30.0)
        except sqlite3.Error as error:
            log.warning("cannot open %s to build a cache: %s", self._database, error)
            return
        try:
            db.execute("BEGIN")
            row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            generation = generation_of(self._database, row)
            built = start
            if built is not None and behind_pruning(db, built.seq):
                built = self._from_file()
            if built is not None and (built.seq > last_change(db) or behind_pruning(db, built.seq)):
                built = None
            if built is None:
                built = self._rebuilt(db, generation)
            else:
                built = self._caught_up(db, built, generation)
                if built.unsaved:
                    built = self._saved(db, built, built.value.compacted())
            with self._handover:
                self._ready = built
        except (sqlite3.Error, OSError, ValueError, StoreError) as error:  # queries keep FTS5
            log.warning("building the derived cache %s failed: %s", self.path, error)
        finally:
            db.close()


def _compaction_threshold(value: Derivable) -> int:
    """Changes after which the cache is rewritten as one block: a tenth of its rows, so a
    growing index is rewritten a logarithmic number of times."""
    return max(1000, value.rows.live_count // 10)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
