"""Derived cache files beside the index database: named arrays in one file, memory-mapped.

A derived file is never the source of truth: deleting it loses nothing (the store rebuilds it
from the database), and a file that fails any check is treated as absent, never trusted. One
file holds a JSON header (what it was built from: the write generation and the last change
``seq`` it saw, plus each array's dtype, shape, offset and the hashes of its blocks) and the
arrays, each at an aligned offset so `numpy.memmap` can map it without copying::

    MAGIC (8 bytes) | header length (8, little-endian) | header hash (16) | header JSON |
    padding | arrays

Writers write a private temporary file and rename it over the old one, so a reader sees a
whole old file or a whole new one. Each array is hashed a `BLOCK` at a time (SHA-256, which
CPUs with SHA extensions run at over 1 GB/s a core), and a block is compared with the hash
recorded at its position: flipped bits, zeroed pages and swapped or shifted blocks all fail
(version 1 summed and xor-ed the data's words, which a swap of two blocks passes). The hashes
are one pass over the data, so `map_arrays` checks only the header and the sizes, and
`Mapped.damage` (or `intact`) the data: a caller runs it before the first use, in the query
or, for a cache with a fallback, in the background while the fallback answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

#: Version 2: a hash per block. A file of another version is not read (it is rebuilt).
MAGIC = b"RGWDRV2\n"
#: The magic of version 1 (sum and xor checksums): an older file, not a damaged one.
OLD_MAGICS = (b"RGWDRV1\n",)
#: A mapped array at least this large gives its pages back after each search that read it
#: (`Mapped.release_pages`); smaller ones stay mapped, so a small index's searches never fault
#: their pages in again (at 100,000 chunks the 154 MB vector matrix is the only larger array,
#: and 0.14 GB of the other derived files stayed mapped after 100 queries of each kind).
RELEASED_BYTES = 128 * 2**20
#: Bytes hashed as one block (the hash of each is recorded): damage is located to a block.
BLOCK = 2**20
#: Blocks hashed at a time, by up to `_HASHERS` threads (hashlib lets go of the GIL); their
#: pages leave the resident set after each window (`Mapped.damage`).
_WINDOW_BLOCKS = 16
_HASHERS = max(1, min(4, os.cpu_count() or 1))
_DIGEST = 16  # bytes of each hash kept (of SHA-256's 32)
_ALIGN = 64
_PREFIX = len(MAGIC) + 8 + _DIGEST


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _hash(data: Any) -> str:
    return hashlib.sha256(data).digest()[:_DIGEST].hex()


def _bytes_of(array: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def block_hashes(array: npt.NDArray[Any]) -> list[str]:
    """The hash of each `BLOCK` of the array's bytes, in order (the last block may be short)."""
    raw = _bytes_of(array)
    return [_hash(raw[start : start + BLOCK]) for start in range(0, raw.size, BLOCK)]


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
            "blocks": block_hashes(array),
        }
        end = offset + array.nbytes
        offset = _aligned(end)
    header = json.dumps({"meta": dict(meta), "block": BLOCK, "arrays": layout}).encode()
    start = _aligned(_PREFIX + len(header))
    prefix = MAGIC + len(header).to_bytes(8, "little") + bytes.fromhex(_hash(header))
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(prefix + header)
            for name, array in contiguous.items():
                out.seek(start + int(layout[name]["offset"]))  # type: ignore[call-overload]
                out.write(array.reshape(-1).view(np.uint8).data)
            out.truncate(start + end)  # no padding after the last array
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class Unreadable(Exception):
    """A derived file that cannot be mapped: its message says why (`open_arrays`)."""


@dataclass(frozen=True)
class Mapped:
    """A derived file's meta and its arrays, memory-mapped; `damage` checks their hashes."""

    meta: dict[str, Any]
    arrays: dict[str, npt.NDArray[Any]]
    hashes: dict[str, tuple[str, ...]]
    identity: tuple[int, int]  # the file's (device, inode) when it was mapped

    def intact(self) -> bool:
        return self.damage() is None

    def damage(self) -> str | None:
        """The first block whose hash is not the recorded one (``"array NAME, bytes
        START-END"``), or None when every block matches: one pass over the data. The pages it
        reads leave this process's resident set window by window: they stay in the page
        cache (a later read is a minor fault), so the process is charged only for the pages
        its queries touch, and checking a 1.5 GB file never maps all of it at once."""
        for name, array in self.arrays.items():
            _advise(array, "MADV_SEQUENTIAL")
            _advise(array, "MADV_WILLNEED")
            raw = _bytes_of(array)
            for at, found in _hashed_blocks(array, raw):
                if found != self.hashes[name][at]:
                    end = min(raw.size, (at + 1) * BLOCK)
                    return f"array {name}, bytes {at * BLOCK:,}-{end:,}: its hash differs"
        return None

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


def _hashed_blocks(
    array: npt.NDArray[Any], raw: npt.NDArray[np.uint8]
) -> Iterator[tuple[int, str]]:
    """(block number, hash) of each block of ``raw`` (the bytes of ``array``), a window of
    `_WINDOW_BLOCKS` at a time, hashed by threads where there are several blocks; each
    window's pages are dropped from the resident set once hashed."""
    starts = range(0, raw.size, BLOCK)
    if len(starts) < 4 or _HASHERS == 1:
        for at, start in enumerate(starts):
            yield at, _hash(raw[start : start + BLOCK])
            _release_through(array, start + BLOCK)
        return
    with ThreadPoolExecutor(_HASHERS, thread_name_prefix="ragwright hash") as pool:
        for first in range(0, len(starts), _WINDOW_BLOCKS):
            window = starts[first : first + _WINDOW_BLOCKS]
            found = pool.map(lambda start: _hash(raw[start : start + BLOCK]), window)
            yield from enumerate(found, first)
            _release_through(array, window[-1] + BLOCK)


def open_arrays(path: Path) -> Mapped:
    """The meta and read-only memory-mapped arrays of ``path``, checked for everything but
    the data's hashes (magic, the header's hash, sizes); reading no data, so opening a large
    file costs nothing until its pages are used. `Unreadable` says what is wrong;
    `FileNotFoundError` for no file."""
    try:
        with open(path, "rb") as source:
            identity = os.fstat(source.fileno())
            prefix = source.read(_PREFIX)
            size = int.from_bytes(prefix[len(MAGIC) : len(MAGIC) + 8], "little")
            header = source.read(size) if prefix[: len(MAGIC)] == MAGIC else b""
    except FileNotFoundError:
        raise
    except OSError as error:
        raise Unreadable(f"cannot be read: {error}") from None
    _check_prefix(prefix, header, size)
    try:
        parsed = json.loads(header)
        start = _aligned(_PREFIX + size)
        return _mapped(path, parsed, start, identity.st_size, (identity.st_dev, identity.st_ino))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise Unreadable(f"its header does not describe its arrays: {error}") from None


def _check_prefix(prefix: bytes, header: bytes, size: int) -> None:
    if prefix[: len(MAGIC)] in OLD_MAGICS:
        raise Unreadable("an older format of derived file (rebuilt when next used)")
    if not prefix:
        raise Unreadable("empty (0 bytes)")
    if len(prefix) != _PREFIX or prefix[: len(MAGIC)] != MAGIC:
        raise Unreadable("not a ragwright derived file: its first bytes are not the magic")
    if len(header) != size:
        raise Unreadable("truncated: shorter than its header says")
    if bytes.fromhex(_hash(header)) != prefix[len(MAGIC) + 8 :]:
        raise Unreadable("its header's hash differs")


def _mapped(
    path: Path, header: dict[str, Any], start: int, total: int, identity: tuple[int, int]
) -> Mapped:
    """The arrays ``header`` describes, mapped from ``start`` in a file of ``total`` bytes."""
    if int(header["block"]) != BLOCK:
        raise ValueError(f"blocks of {header['block']} bytes, not {BLOCK}")
    arrays: dict[str, npt.NDArray[Any]] = {}
    hashes: dict[str, tuple[str, ...]] = {}
    for name, spec in header["arrays"].items():
        dtype = np.dtype(spec["dtype"])
        shape = tuple(int(n) for n in spec["shape"])
        offset = start + int(spec["offset"])
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        hashes[name] = tuple(str(h) for h in spec["blocks"])
        if offset + nbytes > total:
            raise Unreadable(f"truncated: array {name} ends past the end of the file")
        if len(hashes[name]) != -(-nbytes // BLOCK):
            raise ValueError(f"array {name} has {len(hashes[name])} block hashes")
        arrays[name] = (
            np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)
            if nbytes
            else np.empty(shape, dtype=dtype)
        )
    return Mapped(dict(header["meta"]), arrays, hashes, identity)


def map_arrays(path: Path) -> Mapped | None:
    """`open_arrays`, or None for a file that is missing or cannot be mapped."""
    try:
        return open_arrays(path)
    except (OSError, Unreadable):
        return None


def read_header(path: Path) -> dict[str, Any] | None:
    """The meta of ``path``'s header, its hash checked (None: no file, or not a readable one of
    this version); reads the header only."""
    try:
        with open(path, "rb") as source:
            prefix = source.read(_PREFIX)
            size = int.from_bytes(prefix[len(MAGIC) : len(MAGIC) + 8], "little")
            header = source.read(size) if prefix[: len(MAGIC)] == MAGIC else b""
        _check_prefix(prefix, header, size)
        meta = json.loads(header)["meta"]
    except (OSError, Unreadable, ValueError, KeyError, TypeError):
        return None
    return meta if isinstance(meta, dict) else None


def read_arrays(path: Path) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]] | None:
    """The meta and read-only memory-mapped arrays of ``path``; None when it is missing or
    fails a check (magic, header, sizes, hashes): the caller rebuilds it."""
    mapped = map_arrays(path)
    if mapped is None or not mapped.intact():
        return None
    return mapped.meta, mapped.arrays


def remove_if_same(path: Path, mapped: Mapped) -> None:
    """Delete ``path`` if it is still the file ``mapped`` was read from (not one another
    process has written since, by rename)."""
    with contextlib.suppress(OSError):
        found = path.stat()
        if (found.st_dev, found.st_ino) == mapped.identity:
            path.unlink()


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
