"""`Watcher`: file-system events, debounced, and reconcile walks on a schedule, driving a
`FolderSync` until told to stop.

Events come from ``watchfiles`` (the operating system's notifications: inotify, FSEvents,
ReadDirectoryChangesW). A changed path waits until no event has named it for the debounce
interval and its size and time stayed the same between two looks, so a file still being
written is synced once, when complete. Events can be missed (a full kernel queue, changes made
while nothing watched), so the whole roots are also walked: once when the watch starts (after
the watcher is listening, so nothing falls between the two) and then every
``reconcile_every`` seconds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, MissingDependencyError, RagwrightError
from ragwright.pipeline.sync.folder_sync import FolderSync, SyncReport
from ragwright.pipeline.sync.sync_status import SyncStatus


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """``debounce_ms``: quiet time a changed path waits before it is synced;
    ``reconcile_every``: seconds between walks of the whole roots (0: only at the start)."""

    debounce_ms: int = 500
    reconcile_every: float = 300.0

    def __post_init__(self) -> None:
        if self.debounce_ms < 1:
            raise ConfigError(f"--debounce must be at least 1 ms, not {self.debounce_ms}")
        if self.reconcile_every < 0:
            raise ConfigError(f"--reconcile-every must be 0 or more, not {self.reconcile_every}")


#: How a watch runs unless told otherwise (the CLI's defaults).
DEFAULT_WATCH = WatchOptions()


_Look = tuple[int, int] | None


def _look(path: Path) -> _Look:
    """A path's size and modification time (None when it does not exist)."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


class Settling:
    """Changed paths waiting to settle. They are synced together once no event at all came
    for ``debounce`` seconds (so both halves of a rename, which may arrive in two batches of
    events, are in one pass and the move is seen), each only if its size and time are those of
    the previous look (a file still being written waits for another interval). Under events
    that never pause, a path is synced anyway ``patience`` seconds after it was first named."""

    def __init__(self, debounce: float, patience: float | None = None) -> None:
        self.debounce = debounce
        self.patience = patience if patience is not None else max(20 * debounce, 2.0)
        self._paths: dict[Path, tuple[float, float, _Look]] = {}  # first named, due, look
        self._last_event = float("-inf")

    def __len__(self) -> int:
        return len(self._paths)

    def note(self, path: Path, now: float) -> None:
        first = self._paths[path][0] if path in self._paths else now
        self._paths[path] = (first, now + self.debounce, _look(path))
        self._last_event = max(self._last_event, now)

    def waiting(self) -> set[Path]:
        return set(self._paths)

    def ready(self, now: float) -> list[Path]:
        quiet = now - self._last_event >= self.debounce
        ready = []
        for path, (first, due, look) in list(self._paths.items()):
            if due > now or not (quiet or now - first >= self.patience):
                continue
            current = _look(path)
            if current == look:
                ready.append(path)
                del self._paths[path]
            else:  # still being written: look again after another interval
                self._paths[path] = (first, now + self.debounce, current)
        return ready


class Watcher:
    """Runs ``sync`` on events and on schedule until ``stop`` is set; ``status`` tells how it
    stands, and ``on_pass`` (if given) hears about each pass that changed or failed something."""

    def __init__(
        self,
        sync: FolderSync,
        status: SyncStatus,
        options: WatchOptions | None = None,
        on_pass: Callable[[SyncReport, bool], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self.sync = sync
        self.status = status
        self.options = options or WatchOptions()
        self.on_pass = on_pass
        self.on_error = on_error

    def run(self, stop: threading.Event) -> None:
        debounce = self.options.debounce_ms
        settling = Settling(debounce / 1000)
        every = self.options.reconcile_every
        reconcile_at: float | None = 0.0  # at the first wake-up: the watcher listens by then
        self.status.started()
        try:
            for changes in _events(self.sync.roots, debounce, stop):
                now = time.monotonic()
                for raw in changes:
                    path = Path(raw)
                    if self.sync.watched(path):
                        settling.note(path, now)
                ready = settling.ready(now)
                # the paths being synced now are no longer pending: a pass's line must not
                # count them as waiting still
                self.status.pending(len(settling))
                if ready and not self._pass(partial(self.sync.sync, ready), reconcile=False):
                    for path in ready:  # tried again after another interval
                        settling.note(path, time.monotonic())
                if reconcile_at is not None and now >= reconcile_at:
                    skip = settling.waiting()
                    self._pass(partial(self.sync.reconcile, skip), reconcile=True)
                    reconcile_at = time.monotonic() + every if every > 0 else None
                self.status.pending(len(settling))
        finally:
            self.status.stopped()

    def _pass(self, work: Callable[[], SyncReport], *, reconcile: bool) -> bool:
        try:
            report = work()
        except (RagwrightError, OSError) as error:
            reason = str(error) or type(error).__name__
            self.status.failed(reason)
            if self.on_error is not None:
                self.on_error(reason)
            return False
        self.status.record(report, reconcile=reconcile)
        if self.on_pass is not None and (report.changed or report.failed or reconcile):
            self.on_pass(report, reconcile)
        return True


def _events(roots: list[Path], debounce_ms: int, stop: threading.Event) -> Iterator[set[str]]:
    """The paths each batch of file-system events named; an empty batch at least every 50 ms
    (a quarter of the debounce when shorter), so waiting paths and the schedule are looked at
    without events."""
    try:
        from watchfiles import watch
    except ImportError as error:
        raise MissingDependencyError(
            "watching folders", "pip install 'ragwright[watch]'"
        ) from error
    for root in roots:
        if not root.is_dir():
            raise ConfigError(f"cannot watch {root}: not a folder")
    batches: Iterator[set[tuple[Any, str]]] = watch(
        *roots,
        watch_filter=None,  # FolderSync.watched decides (dot-entries, the index's directory)
        debounce=debounce_ms,
        step=min(20, debounce_ms),
        stop_event=stop,
        rust_timeout=max(10, min(50, debounce_ms // 4)),
        yield_on_timeout=True,
        ignore_permission_denied=True,
    )
    for batch in batches:
        yield {path for _, path in batch}
