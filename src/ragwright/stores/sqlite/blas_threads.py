"""One BLAS thread for a query's matrix product.

A query multiplies the vector matrix by one vector: a memory-bound product that one core
finishes in about a millisecond at SciFact's size. OpenBLAS splits it across all cores by
default, and on a loaded machine its threads wait for cores they do not get: measured
interleaved on this 2-core machine under load (5,183 x 384), 79 ms p50 with OpenBLAS's 2
threads against 1.0 ms with one (docs/benchmarks.md). So the product runs with one BLAS
thread, and the process's own setting is restored afterwards: the limit is held while any
query in the process is multiplying, and only then.

The BLAS libraries are found through threadpoolctl (extra ``speed``); without it the product
runs with the process's setting (``OPENBLAS_NUM_THREADS=1`` in the environment pins a whole
process). OpenBLAS 0.3.31 ignores a thread count set from another thread once the main thread
has set one: there the hold changes nothing, which costs speed, never a result.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol


class ThreadedLibrary(Protocol):
    """What the hold needs of a BLAS library (threadpoolctl's controllers have it)."""

    @property
    def num_threads(self) -> int: ...

    def set_num_threads(self, num_threads: int) -> object: ...


class OneThreadHold:
    """A counted hold on one thread for ``libraries``: the first holder in sets it, the last
    one out restores what the libraries had."""

    def __init__(self, libraries: Sequence[ThreadedLibrary]) -> None:
        self._libraries = tuple(libraries)
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: list[tuple[ThreadedLibrary, int]] = []

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self._libraries:
            yield
            return
        with self._lock:
            if self._holders == 0:
                self._saved = [(lib, lib.num_threads) for lib in self._libraries]
                for lib, _ in self._saved:
                    lib.set_num_threads(1)
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    for lib, threads in self._saved:
                        lib.set_num_threads(threads)


_process_hold: OneThreadHold | None = None


def _blas_hold() -> OneThreadHold:
    """The hold on this process's BLAS libraries (none without threadpoolctl), found once:
    numpy loads its BLAS when it is imported, before any query."""
    global _process_hold
    if _process_hold is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _process_hold = OneThreadHold(())
        else:
            found = ThreadpoolController().select(user_api="blas").lib_controllers
            _process_hold = OneThreadHold(found)
    return _process_hold


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with this process's BLAS limited to one thread."""
    with _blas_hold().held():
        yield
