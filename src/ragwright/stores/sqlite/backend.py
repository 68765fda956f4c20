"""`SQLiteBackend`: an index in one directory, one SQLite database per collection.

The default collection is ``DIR/index.sqlite3`` (the layout of every index before collections
existed, so those keep working); a named collection is ``DIR/collections/NAME/index.sqlite3``.
The LLM ledger and response cache live in the default database.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, StoreError, UnknownCollection
from ragwright.models import DEFAULT_COLLECTION, check_collection_name
from ragwright.stores.sqlite.llm_records import SQLiteLLMRecords
from ragwright.stores.sqlite.store import DATABASE_NAME, DURABILITY, SQLiteStore

COLLECTIONS_DIR = "collections"
#: The keys of ``[store.sqlite]``: what each value must be, and how to say so.
_OPTIONS: dict[str, tuple[Callable[[object], bool], str]] = {
    "durability": (lambda v: isinstance(v, str) and v in DURABILITY, '"normal" or "full"'),
    "private": (lambda v: isinstance(v, bool), "true or false"),
}


class SQLiteBackend:
    """The collections of an index directory. ``store_options`` go to each `SQLiteStore`."""

    def __init__(self, location: str | Path, **store_options: object) -> None:
        self.directory = Path(location)
        self._store_options = store_options

    @staticmethod
    def options_from_table(table: Mapping[str, object], where: str) -> dict[str, Any]:
        """The `SQLiteStore` options a ``[store.sqlite]`` table of ragwright.toml sets:
        ``durability`` ("normal" or "full") and ``private`` (true or false)."""
        for key, value in table.items():
            if key not in _OPTIONS:
                raise ConfigError(f"{where}: unknown key {key!r}; known: {', '.join(_OPTIONS)}")
            allowed, expected = _OPTIONS[key]
            if not allowed(value):
                raise ConfigError(f"{where}: {key} must be {expected}, not {value!r}")
        return dict(table)

    @property
    def location(self) -> str:
        return str(self.directory)

    def open(
        self, collection: str = DEFAULT_COLLECTION, *, create: bool = True, read_only: bool = False
    ) -> SQLiteStore:
        directory = self._directory(collection)
        if (read_only or not create) and not (directory / DATABASE_NAME).is_file():
            if collection == DEFAULT_COLLECTION:
                raise StoreError(
                    f"no index at {self.directory}; create one with `ragwright ingest PATH`"
                )
            raise UnknownCollection(
                f"no collection {collection!r} in the index at {self.directory}; create it with "
                f"`ragwright collections create {collection}`"
            )
        options: dict[str, Any] = {**self._store_options, "create": create, "read_only": read_only}
        return SQLiteStore(directory, **options)

    def collections(self) -> list[str]:
        """The collections that exist, the default one first when it does."""
        names = []
        if (self.directory / DATABASE_NAME).is_file():
            names.append(DEFAULT_COLLECTION)
        folder = self.directory / COLLECTIONS_DIR
        if folder.is_dir():
            names += sorted(
                p.name
                for p in folder.iterdir()
                if p.name != DEFAULT_COLLECTION and (p / DATABASE_NAME).is_file()
            )
        return names

    def create_collection(self, name: str) -> None:
        if name in self.collections():
            raise ConfigError(f"the collection {name!r} already exists")
        self.open(name, create=True).close()

    def drop_collection(self, name: str) -> bool:
        """Delete a named collection with everything in it. The default collection holds the
        index's own records and cannot be dropped (delete its documents instead)."""
        if check_collection_name(name) == DEFAULT_COLLECTION:
            raise ConfigError("the default collection cannot be dropped")
        directory = self._directory(name)
        if not (directory / DATABASE_NAME).is_file():
            return False
        shutil.rmtree(directory)
        return True

    def llm_records(self) -> SQLiteLLMRecords:
        self.directory.mkdir(parents=True, exist_ok=True)
        return SQLiteLLMRecords(self.directory / DATABASE_NAME)

    def close(self) -> None:
        """Nothing to release: each store and the records hold their own connection."""

    def _directory(self, collection: str) -> Path:
        if check_collection_name(collection) == DEFAULT_COLLECTION:
            return self.directory
        return self.directory / COLLECTIONS_DIR / collection
