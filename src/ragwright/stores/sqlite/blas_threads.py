"""One BLAS thread for the process that searches.

A query multiplies the vector matrix by one vector: a memory-bound product that one core
finishes in about a millisecond at SciFact's size. OpenBLAS splits it across all cores by
default, and on a loaded machine its threads wait for cores they do not get: measured
interleaved on this 2-core machine under load (5,183 x 384), 79 ms p50 with OpenBLAS's 2
threads against 1.0 ms with one (docs/benchmarks.md). Limiting the threads around each
product and restoring them afterwards was no cure: a product right after a 2-thread one ran
with one thread at 2.4 ms p50, the next ones at 54-83 ms (OpenBLAS's idle threads still
spinning for the cores). So the first search limits the process's BLAS to one thread, once,
and leaves it there, as ``OPENBLAS_NUM_THREADS=1`` in the environment would.

The BLAS libraries are found through threadpoolctl (extra ``speed``); without it nothing
changes (set ``OPENBLAS_NUM_THREADS=1`` for the process instead). A process whose environment
names its BLAS threads (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``)
chose them itself: it is left as it is.
"""

from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_done = False
_CHOSEN_BY_USER = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """Limit this process's BLAS libraries to one thread, the first time only (cheap after)."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            pass
        else:
            if any(name in os.environ for name in _CHOSEN_BY_USER):
                _done = True
                return
            for library in ThreadpoolController().select(user_api="blas").lib_controllers:
                library.set_num_threads(1)
        _done = True
