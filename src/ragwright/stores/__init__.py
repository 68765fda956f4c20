"""Stores: where an index keeps documents, chunks and vectors.

`open_backend` opens an index from what the user names: a directory (the embedded SQLite
store) or a URL (``postgresql://…``), through the ``ragwright.stores`` entry points, which the
built-in stores register with as a third-party store would. The entry point's name is the URL
scheme it serves; ``sqlite`` serves directories.
"""

from __future__ import annotations

import re
from pathlib import Path

from ragwright._plugins import plugins
from ragwright.errors import ConfigError
from ragwright.ports import StoreBackend

#: The store for a location that is a directory rather than a URL.
DIRECTORY_STORE = "sqlite"
#: Other spellings of a scheme, as libpq accepts them.
_SCHEME_ALIASES = {"postgres": "postgresql"}
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def store_name(location: str | Path) -> str:
    """The ``ragwright.stores`` entry point that serves ``location``."""
    if isinstance(location, Path):
        return DIRECTORY_STORE
    match = _URL.match(location)
    if match is None:
        return DIRECTORY_STORE
    scheme = match["scheme"].lower()
    return _SCHEME_ALIASES.get(scheme, scheme)


def is_url(location: str | Path) -> bool:
    return isinstance(location, str) and _URL.match(location) is not None


def open_backend(location: str | Path) -> StoreBackend:
    """The backend of the index at ``location`` (a directory or a store URL)."""
    name = store_name(location)
    found = plugins("ragwright.stores", "store")
    if name not in found:
        known = ", ".join(f"{n}://" for n in sorted(found) if n != DIRECTORY_STORE)
        raise ConfigError(
            f"no store serves {name}:// URLs (installed: {known or 'none'}; a directory "
            "opens the embedded SQLite store)"
        )
    backend_class = found[name].load()
    backend: StoreBackend = backend_class(location)
    return backend


_PASSWORD = re.compile(r"(?P<head>://[^/@:]*:)[^/@]*@")


def display_location(location: str | Path) -> str:
    """``location`` as it may be shown or logged: a URL's password is masked."""
    return _PASSWORD.sub(r"\g<head>***@", str(location))
