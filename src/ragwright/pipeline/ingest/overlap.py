"""Ingest's steps overlapped, so the embedder (the slow step, and one that lets go of the GIL)
is not kept waiting: the next sources are read, parsed (in the parse worker's process) and
chunked on one thread while a batch is embedded (`prefetched`), and each embedded batch is
written on another while the next is embedded (`OneWriter`).

Both keep order and bound memory: sources come out in the order they went in, at most
`PREFETCHED` ahead; batches are written one at a time in the order given, at most one waiting
behind the one being written. An error on either thread is raised in the caller at its next
step, as if the step had run there; and each thread runs in a copy of the caller's context
(contextvars), so a trace's spans nest there as they would in one thread.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from typing import TypeVar

T = TypeVar("T")

#: Sources read and chunked ahead of the one being embedded.
PREFETCHED = 2

_DONE = object()


class OneWriter:
    """Runs writes one at a time on a thread of its own, in the order submitted."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragwright write")
        self._running: Future[None] | None = None

    def submit(self, write: Callable[[], None]) -> None:
        """Start ``write`` once the one before it is done (its error raised here)."""
        self.wait()
        # In the caller's context (its trace's current span, say), as if it ran there.
        self._running = self._pool.submit(contextvars.copy_context().run, write)

    def wait(self) -> None:
        """Wait for the write running, raising its error."""
        running, self._running = self._running, None
        if running is not None:
            running.result()

    def __enter__(self) -> OneWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if exc_info[0] is None:
                self.wait()
        finally:
            self._pool.shutdown(wait=True)


@contextmanager
def prefetched(items: Iterable[T], ahead: int) -> Iterator[Iterator[T]]:
    """``items``, produced on a thread of its own up to ``ahead`` items before they are taken.
    Leaving the block early stops the thread after the item it is producing."""
    handed: queue.Queue[object] = queue.Queue(maxsize=max(1, ahead))
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if not _put(handed, item, stop):
                    return
            _put(handed, _DONE, stop)
        except BaseException as error:  # raised where the items are taken
            _put(handed, _Raised(error), stop)

    context = contextvars.copy_context()  # the caller's (its trace's current span, say)
    thread = threading.Thread(
        target=context.run, args=(produce,), name="ragwright prepare", daemon=True
    )
    thread.start()

    def taken() -> Iterator[T]:
        while True:
            item = handed.get()
            if item is _DONE:
                return
            if isinstance(item, _Raised):
                raise item.error
            yield item  # type: ignore[misc]

    try:
        yield taken()
    finally:
        stop.set()
        while thread.is_alive():  # let a producer blocked on a full queue see the stop
            with suppress(queue.Empty):
                handed.get(timeout=0.05)
        thread.join()


class _Raised:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def _put(handed: queue.Queue[object], item: object, stop: threading.Event) -> bool:
    """Put ``item`` once there is room; False if told to stop first."""
    while not stop.is_set():
        try:
            handed.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False
