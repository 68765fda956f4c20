"""Derived cache files beside the index database: named arrays in one file, memory-mapped.

A derived file is never the source of truth: deleting it loses nothing (the store rebuilds it
from the database), and a file that fails any check is treated as absent, never trusted. One
file holds a JSON header (what it was built from: the write generation and the last change
``seq`` it saw, plus each array's dtype, shape, offset and checksum) and the arrays, each at an
aligned offset so `numpy.memmap` can map it without copying::

    MAGIC (8 bytes) | header length (8 bytes, little-endian) | header JSON | padding | arrays

Writers write a private temporary file and rename it over the old one, so a reader sees a
whole old file or a whole new one. The checksum (a 64-bit sum and xor of the data's words)
catches zeroed pages and flipped bits; it costs one pass over the data, so `map_arrays`
checks only the sizes (truncation) and leaves the checksums to `Mapped.intact`, which a
caller runs before the first use or in the background.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"RGWDRV1\n"
#: A mapped array at least this large gives its pages back after each search that read it
#: (`Mapped.release_pages`); smaller ones stay mapped, so a small index's searches never fault
#: their pages in again (at 100,000 chunks the 154 MB vector matrix is the only larger array,
#: and 0.14 GB of the other derived files stayed mapped after 100 queries of each kind).
RELEASED_BYTES = 128 * 2**20
#: Bytes a checksum sums at a time (a multiple of 8).
_WINDOW = 64 * 2**20
_ALIGN = 64
_PREFIX = len(MAGIC) + 8


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def checksum(array: npt.NDArray[Any], *, release: bool = False) -> str:
    """Sum and xor of the array's bytes as 64-bit words (the tail zero-padded), read
    `_WINDOW` bytes at a time; ``release`` drops each window's pages from this process's
    resident set once summed (a mapped array: the pass then holds one window, not the file)."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    whole = raw.size // 8 * 8
    total = mixed = 0
    for start in range(0, whole, _WINDOW):
        end = min(start + _WINDOW, whole)
        words = raw[start:end].view(np.uint64)
        total += int(np.add.reduce(words, dtype=np.uint64))
        mixed ^= int(np.bitwise_xor.reduce(words))
        if release:
            _release_through(array, end)
    tail = np.zeros(8, dtype=np.uint8)
    tail[: raw.size - whole] = raw[whole:]
    if release:
        _release_through(array, raw.size)
    last = int(tail.view(np.uint64)[0])
    return f"{(total + last) % 2**64:016x}{mixed ^ last:016x}-{raw.size}"


def write_arrays(
    path: Path, meta: Mapping[str, object], arrays: Mapping[str, npt.NDArray[Any]]
) -> None:
    """Write ``arrays`` and ``meta`` to ``path`` atomically (owner-only, like the database)."""
    layout: dict[str, dict[str, object]] = {}
    contiguous = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    offset = end = 0
    for name, array in contiguous.items():
        layout[name] = {
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "offset": offset,
            "checksum": checksum(array),
        }
        end = offset + array.nbytes
        offset = _aligned(end)
    header = json.dumps({"meta": dict(meta), "arrays": layout}).encode()
    start = _aligned(_PREFIX + len(header))
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(MAGIC + len(header).to_bytes(8, "little") + header)
            for name, array in contiguous.items():
                out.seek(start + int(layout[name]["offset"]))  # type: ignore[call-overload]
                out.write(array.reshape(-1).view(np.uint8).data)
            out.truncate(start + end)  # no padding after the last array
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@dataclass(frozen=True)
class Mapped:
    """A derived file's meta and its arrays, memory-mapped; `intact` checks them."""

    meta: dict[str, Any]
    arrays: dict[str, npt.NDArray[Any]]
    checksums: dict[str, str]

    def intact(self) -> bool:
        """Whether every array matches its checksum (one pass over the data). The pages it
        reads leave this process's resident set window by window: they stay in the page cache
        (a later read is a minor fault), so the process is charged only for the pages its
        queries touch, and checking a 1.5 GB file never maps all of it at once."""
        for name, array in self.arrays.items():
            _advise(array, "MADV_SEQUENTIAL")
            _advise(array, "MADV_WILLNEED")
            if checksum(array, release=True) != self.checksums[name]:
                return False
        return True

    def release_pages(self) -> None:
        """Drop the pages of the large arrays (`RELEASED_BYTES`) from this process's resident
        set; they stay in the page cache, so the next search maps them again with a minor
        fault. Linux keeps such a file in the page cache as large folios and maps a whole
        folio (2 MB) on a fault: 384 rows rescored at a million chunks kept 0.46 GB of the
        vector file mapped, 19 searches all of it. A search's few scattered rows should not
        charge the serving process for the whole file."""
        for array in self._large:
            _advise(array, "MADV_DONTNEED")

    @cached_property
    def _large(self) -> tuple[npt.NDArray[Any], ...]:
        return tuple(a for a in self.arrays.values() if a.nbytes >= RELEASED_BYTES)


def map_arrays(path: Path) -> Mapped | None:
    """The meta and read-only memory-mapped arrays of ``path``, checked for everything but
    the checksums (magic, header, sizes: a truncated or foreign file is None); reading no
    data, so opening a large file costs nothing until its pages are used."""
    try:
        with open(path, "rb") as source:
            prefix = source.read(_PREFIX)
            if len(prefix) != _PREFIX or prefix[: len(MAGIC)] != MAGIC:
                return None
            size = int.from_bytes(prefix[len(MAGIC) :], "little")
            header = json.loads(source.read(size))
        total = path.stat().st_size
        start = _aligned(_PREFIX + size)
        arrays: dict[str, npt.NDArray[Any]] = {}
        checksums: dict[str, str] = {}
        for name, spec in header["arrays"].items():
            dtype = np.dtype(spec["dtype"])
            shape = tuple(int(n) for n in spec["shape"])
            offset = start + int(spec["offset"])
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if offset + nbytes > total:
                return None
            arrays[name] = (
                np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)
                if nbytes
                else np.empty(shape, dtype=dtype)
            )
            checksums[name] = str(spec["checksum"])
        return Mapped(dict(header["meta"]), arrays, checksums)
    except (OSError, ValueError, KeyError, TypeError):  # absent, truncated or not ours
        return None


def read_arrays(path: Path) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]] | None:
    """The meta and read-only memory-mapped arrays of ``path``; None when it is missing or
    fails a check (magic, sizes, checksums): the caller rebuilds it."""
    mapped = map_arrays(path)
    if mapped is None or not mapped.intact():
        return None
    return mapped.meta, mapped.arrays


def _advise(array: npt.NDArray[Any], advice: str) -> None:
    """``madvise`` the mapping behind ``array`` (nothing for an array that is not mapped, or
    where the platform lacks the advice)."""
    handle = getattr(array, "_mmap", None)
    if isinstance(handle, mmap.mmap) and hasattr(mmap, advice):
        with contextlib.suppress(OSError, ValueError):
            handle.madvise(getattr(mmap, advice))


def _release_through(array: npt.NDArray[Any], end: int) -> None:
    """``MADV_DONTNEED`` a memory-mapped array's mapping up to its byte ``end``, from the
    mapping's start: a fault maps the pages around the one read, behind it too, so pages
    dropped once can be mapped again by the next window (nothing for an array that is not a
    `numpy.memmap`)."""
    handle = getattr(array, "_mmap", None)
    if isinstance(handle, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        skip = int(getattr(array, "offset", 0)) % mmap.ALLOCATIONGRANULARITY  # numpy's start
        with contextlib.suppress(OSError, ValueError):
            handle.madvise(mmap.MADV_DONTNEED, 0, min(len(handle), skip + end))


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
