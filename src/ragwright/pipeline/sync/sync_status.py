"""Where a folder watch stands: when the index last caught up, what waits, what fails and why.

`SyncStatus` is written by the watcher's thread and read by the surfaces (the CLI's lines,
``GET /v1/sync``, the web page) as an immutable `SyncSnapshot`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

from ragwright.pipeline.ingest.ingestor import Failure
from ragwright.pipeline.sync.folder_sync import SyncReport


@dataclass(frozen=True, slots=True)
class SyncSnapshot:
    """``last_sync``: when a pass last finished (Unix seconds; None before the first);
    ``last_reconcile`` and ``reconcile_complete``: the last walk of the whole roots and
    whether it examined everything (only a complete one deletes); ``pending``: changed paths
    waiting to settle (still being written) or to be synced; ``failures``: the files whose last
    sync failed, with the reason, until a later sync of them succeeds; ``error``: why the last
    pass failed as a whole (None when it did not)."""

    roots: tuple[str, ...]
    running: bool = False
    started_at: float | None = None
    last_sync: float | None = None
    last_reconcile: float | None = None
    reconcile_complete: bool | None = None
    pending: int = 0
    added: int = 0
    updated: int = 0
    moved: int = 0
    removed: int = 0
    failures: tuple[Failure, ...] = ()
    error: str | None = None
    passes: int = 0


@dataclass
class SyncStatus:
    """The live status of one watch, safe to share between threads."""

    roots: tuple[str, ...]
    _snapshot: SyncSnapshot = field(init=False)
    _failures: dict[str, str] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._snapshot = SyncSnapshot(self.roots)

    def snapshot(self) -> SyncSnapshot:
        with self._lock:
            return self._snapshot

    def started(self) -> None:
        self._update(running=True, started_at=time.time())

    def stopped(self) -> None:
        self._update(running=False, pending=0)

    def pending(self, count: int) -> None:
        self._update(pending=count)

    def record(self, report: SyncReport, *, reconcile: bool) -> None:
        """A finished pass."""
        with self._lock:
            for source in report.succeeded + report.removed + [old for old, _ in report.moved]:
                self._failures.pop(source, None)
            self._failures.update((f.source, f.reason) for f in report.failed)
            now = time.time()
            current = self._snapshot
            self._snapshot = replace(
                current,
                last_sync=now,
                last_reconcile=now if reconcile else current.last_reconcile,
                reconcile_complete=report.complete if reconcile else current.reconcile_complete,
                added=current.added + len(report.added),
                updated=current.updated + len(report.updated),
                moved=current.moved + len(report.moved),
                removed=current.removed + len(report.removed),
                failures=tuple(Failure(s, r) for s, r in sorted(self._failures.items())),
                error=None,
                passes=current.passes + 1,
            )

    def failed(self, error: str) -> None:
        """A pass that failed as a whole (the index could not be written, a limit refused the
        walk); the next pass tries again."""
        self._update(error=error)

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._snapshot = replace(self._snapshot, **changes)  # type: ignore[arg-type]
