"""Freed heap memory goes back to the operating system (`release_freed_memory`), which is what
keeps a huge document's ingest near what it holds (figures: benchmarks/ingest_memory.py)."""

from __future__ import annotations

import platform

import pytest

from ragwright.freed_memory import release_freed_memory

MB = 1024 * 1024


def resident() -> int:
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_what_the_heap_freed_is_given_back() -> None:
    large = b"x" * (24 * MB)  # freed, it raises glibc's mmap threshold past the blocks below
    del large
    blocks = [b"x" * MB for _ in range(24)]  # from the heap now, not mapped
    pin = b"x" * 4096  # above them, so their pages are not simply the heap's top
    held = resident()
    del blocks
    kept = resident()
    assert release_freed_memory()
    given_back = kept - resident()
    assert held - kept < 8 * MB  # freed, yet still in the process
    assert given_back > 16 * MB
    del pin
