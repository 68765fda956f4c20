"""Ingest's steps overlapped, so the embedder (the slow step, and one that lets go of the GIL)
is not kept waiting: the next sources are read, parsed (in the parse worker's process) and
chunked on one thread while a batch is embedded (`prefetched`), and each embedded batch is
written on another while the next is embedded (`OneWriter`).

Both keep order and bound memory: sources come out in the order they went in, at most
`PREFETCHED` ahead (or a weight of them: a batch's chunks, for an embedder that takes a batch
in one call); batches are written one at a time in the order given, at most one waiting
behind the one being written. An error on either thread is raised in the caller at its next
step, as if the step had run there; and each thread runs in a copy of the caller's context
(contextvars), so a trace's spans nest there as they would in one thread.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Generic, TypeVar

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
def prefetched(
    items: Iterable[T], ahead: int, weight: Callable[[T], int] = lambda _: 1
) -> Iterator[Prefetched[T]]:
    """``items``, produced on a thread of its own while those produced weigh less than
    ``ahead`` together (each ``weight(item)``; by default a count of items), so one heavy item
    may go over. Leaving the block early stops the thread after the item it is producing."""
    handed: _Handed[T] = _Handed(max(1, ahead))
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if not handed.put(item, weight(item), stop):
                    return
            handed.put(_DONE, 0, stop)
        except BaseException as error:  # raised where the items are taken
            handed.put(_Raised(error), 0, stop)

    context = contextvars.copy_context()  # the caller's (its trace's current span, say)
    thread = threading.Thread(
        target=context.run, args=(produce,), name="ragwright prepare", daemon=True
    )
    thread.start()
    try:
        yield Prefetched(handed)
    finally:
        stop.set()
        handed.wake()  # a producer waiting for room sees the stop
        thread.join()


class Prefetched(Generic[T]):
    """The items in order, and whether the next one is ready (`ready`)."""

    def __init__(self, handed: _Handed[T]) -> None:
        self._handed = handed

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        item = self._handed.take()
        if item is _DONE:
            self._handed.give_back(item)  # every later call ends too
            raise StopIteration
        if isinstance(item, _Raised):
            raise item.error
        return item  # type: ignore[return-value]

    def ready(self) -> bool:
        """Whether the next item (or the end) can be taken without waiting for it."""
        return self._handed.ready()


class _Handed(Generic[T]):
    """The items produced and not taken yet, with their weight."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: deque[tuple[object, int]] = deque()
        self._load = 0
        self._changed = threading.Condition()

    def put(self, item: object, weight: int, stop: threading.Event) -> bool:
        """Add ``item`` once the load is under the limit; False if told to stop first."""
        with self._changed:
            while self._load >= self._limit and not stop.is_set():
                self._changed.wait()
            if stop.is_set():
                return False
            self._items.append((item, weight))
            self._load += weight
            self._changed.notify_all()
            return True

    def take(self) -> object:
        with self._changed:
            while not self._items:
                self._changed.wait()
            item, weight = self._items.popleft()
            self._load -= weight
            self._changed.notify_all()
            return item

    def give_back(self, item: object) -> None:
        with self._changed:
            self._items.appendleft((item, 0))

    def ready(self) -> bool:
        with self._changed:
            return bool(self._items)

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()


class _Raised:
    def __init__(self, error: BaseException) -> None:
        self.error = error
