"""Handing memory that was freed back to the operating system (glibc's ``malloc_trim``).

glibc serves an allocation below its mmap threshold from the heap, and raises that threshold
to the size of each large block it frees (up to 32 MB on 64-bit). So once a file of a few MB
has been read and let go of, the next copies of its text (the parsed text arriving from the
parse worker, SQLite's two copies of the document's row) come from the heap, and what is
freed there stays in the process. Measured on a 10 MB single-line file: the main process held
27 MB more than it was using once the document's row was written (`benchmarks/ingest_memory.py`).
Files past 32 MB are mapped and unmapped, so they never had the problem.

A streamed (huge) document's write calls `release_freed_memory` where those copies have just
been let go, and so does the SQLite store's background build of a derived cache when it ends
(its thread's malloc arena holds what the build read). Without glibc (macOS, musl, Windows)
there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system; False where that cannot be done."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if os.name != "posix":
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # in the C library the interpreter runs on
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    release: Callable[[int], int] = trim
    return release
