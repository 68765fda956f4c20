"""Plugins by name: the entry points of one group, each name claimed once.

Reading the installed entry points opens every installed package's metadata (~850 packages
in a data-science environment: 30-60 ms, more on a busy machine), and every ingest run asks
twice (parsers, document chunkers). `installed_entry_points` reads them once and again only
when where packages are found changes: the import path, one of its folders (installing or
removing a package adds or removes a ``*.dist-info`` folder there) or the finders. The
entry points are descriptions; what they load is made afresh by each caller.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Protocol

from ragwright.errors import RegistryError

_Places = tuple[tuple[tuple[str, tuple[int, int] | None], ...], tuple[int, ...]]


class _Installed(Protocol):
    """What ``entry_points()`` returns for every group (Python 3.11: a deprecated mapping of
    groups, 3.12 on: `EntryPoints`); both select a group."""

    def select(self, *, group: str = ...) -> EntryPoints: ...


_lock = threading.Lock()
_read: tuple[_Places, _Installed] | None = None


def installed_entry_points(group: str) -> EntryPoints:
    """The installed entry points of ``group``, as ``importlib.metadata.entry_points(group=)``
    finds them; read again once a package could have been installed or removed since."""
    global _read
    places = _package_places()
    read = _read
    if read is None or read[0] != places:
        installed: _Installed = entry_points()  # every group: one read serves them all
        read = (places, installed)
        with _lock:
            _read = read
    return read[1].select(group=group)


def _package_places() -> _Places:
    """What decides which packages are found: each import path entry with its folder's
    modification time and link count (a ``*.dist-info`` folder added or removed changes it
    even within the file system's clock tick), and the meta path finders (an editable
    install may add one)."""
    entries: list[tuple[str, tuple[int, int] | None]] = []
    for entry in sys.path:
        try:
            found = os.stat(entry or ".")
        except OSError:  # gone, or never there
            entries.append((entry, None))
        else:
            entries.append((entry, (found.st_mtime_ns, found.st_nlink)))
    return tuple(entries), tuple(id(finder) for finder in sys.meta_path)


def plugins(group: str, kind: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name. Two plugins claiming one name is a
    `RegistryError` naming both (``kind`` says what they are, e.g. "embedder"); the same
    entry point seen twice (an editable install, say) is no clash."""
    found: dict[str, EntryPoint] = {}
    for entry in installed_entry_points(group):
        if entry.name in found and found[entry.name].value != entry.value:
            raise RegistryError(
                f"two plugins claim the {kind} name {entry.name!r}: "
                f"{found[entry.name].value} and {entry.value}"
            )
        found[entry.name] = entry
    return found
