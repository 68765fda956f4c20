"""Stores: where an index keeps documents, chunks and vectors.

`open_backend` opens an index from what the user names: a directory (the embedded SQLite
store) or a URL (``postgresql://…``), through the ``ragwright.stores`` entry points, which the
built-in stores register with as a third-party store would. The entry point's name is the URL
scheme it serves; ``sqlite`` serves directories.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragwright._plugins import plugins
from ragwright._url_secrets import mask_url_secrets
from ragwright.config import Config
from ragwright.errors import ConfigError, MissingDependencyError
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


def option_defaults() -> dict[str, dict[str, Any]]:
    """Each installed store's ``[store.NAME]`` keys at their defaults, by entry point name
    (`ragwright init` writes them); a store that cannot be loaded or says none is left out."""
    found = plugins("ragwright.stores", "store")
    tables = {}
    for name in sorted(found):
        try:
            defaults = getattr(found[name].load(), "option_defaults", None)
        except (ImportError, MissingDependencyError):  # its extra is not installed
            continue
        if defaults is not None:
            tables[name] = dict(defaults())
    return tables


def open_backend(location: str | Path, config: Config | None = None) -> StoreBackend:
    """The backend of the index at ``location`` (a directory or a store URL), with the
    settings of its store's table in ``config`` (``[store.postgres]`` for a PostgreSQL URL;
    without a config, the store's defaults)."""
    name = store_name(location)
    found = plugins("ragwright.stores", "store")
    if name not in found:
        known = ", ".join(f"{n}://" for n in sorted(found) if n != DIRECTORY_STORE)
        raise ConfigError(
            f"no store serves {name}:// URLs (installed: {known or 'none'}; a directory "
            "opens the embedded SQLite store)"
        )
    backend_class = found[name].load()
    options = {} if config is None else _options(config, name, backend_class, set(found))
    backend: StoreBackend = backend_class(location, **options)
    return backend


def _options(config: Config, name: str, backend_class: Any, stores: set[str]) -> dict[str, Any]:
    """The keyword arguments of the store ``name`` (``backend_class``) in ``config``'s
    ``[store.NAME]`` table, as that store's ``options_from_table`` reads them (a store without
    one takes no table). ``[store]`` holds only tables named after the installed ``stores``
    (URL schemes, in any spelling libpq accepts)."""
    tables: dict[str, tuple[str, dict[str, Any]]] = {}
    for key, table in config.section("store").items():
        store = _SCHEME_ALIASES.get(key, key)
        if store not in stores or not isinstance(table, dict):
            raise ConfigError(
                f"{config.where}: [store.{key}] must be the table of an installed store "
                f"(one of {', '.join(sorted(stores))})"
            )
        if store in tables:
            raise ConfigError(f"{config.where}: [store.{key}] repeats the {store} store's table")
        tables[store] = (key, table)
    key, table = tables.get(name, (name, {}))
    if not table:
        return {}
    read = getattr(backend_class, "options_from_table", None)
    if read is None:
        raise ConfigError(f"{config.where}: the {name} store takes no [store.{key}] settings")
    options: dict[str, Any] = read(table, f"{config.where} [store.{key}]")
    return options


def display_location(location: str | Path) -> str:
    """``location`` as it may be shown or logged: a URL's password and secret query parameters
    (``?password=``, ``?sslpassword=``, ``?token=``, …) masked (`mask_url_secrets`)."""
    return mask_url_secrets(str(location)) if is_url(location) else str(location)
