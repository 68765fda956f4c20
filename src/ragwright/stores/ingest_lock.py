"""One ingest run at a time per index.

Two runs over the same files at once would both find them new and both do all the work
(the result is right, the time doubled). With this lock the second waits, then finds what the
first wrote unchanged. Searches are never blocked: only ingest runs take the lock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "ingest.lock"


@contextmanager
def ingest_lock(directory: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold ``directory``'s ingest lock, calling ``waiting`` first if another run holds it.
    The lock is the operating system's (``flock``), so it is released when its holder exits,
    however it exits; where there is none (Windows), runs are not serialized."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(directory / LOCK_NAME, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
