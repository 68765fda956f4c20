"""`SQLiteBackend`: an index in one directory, one SQLite database per collection.

The default collection is ``DIR/index.sqlite3`` (the layout of every index before collections
existed, so those keep working); a named collection is ``DIR/collections/NAME/index.sqlite3``.
The LLM ledger and response cache live in the default database.
"""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, RepairRefused, StoreError, UnknownCollection
from ragwright.models import (
    DEFAULT_COLLECTION,
    IndexReport,
    RepairReport,
    check_collection_name,
)
from ragwright.stores.setting_rows import broken_keys
from ragwright.stores.sqlite.ann_choice import ANN_MODES
from ragwright.stores.sqlite.check import check_file
from ragwright.stores.sqlite.derived_check import damaged_suffixes
from ragwright.stores.sqlite.llm_records import SQLiteLLMRecords
from ragwright.stores.sqlite.schema import SCHEMA_VERSION
from ragwright.stores.sqlite.setting_repair import SpaceOf, repair_settings
from ragwright.stores.sqlite.store import DATABASE_NAME, DURABILITY, SQLiteStore

COLLECTIONS_DIR = "collections"
#: Findings another command fixes (their details say which): `repair` leaves them as they are.
ELSEWHERE = frozenset({"graph"})
#: The keys of ``[store.sqlite]``: what each value must be, and how to say so.
_OPTIONS: dict[str, tuple[Callable[[object], bool], str]] = {
    "durability": (lambda v: isinstance(v, str) and v in DURABILITY, '"normal" or "full"'),
    "private": (lambda v: isinstance(v, bool), "true or false"),
    "ann": (lambda v: isinstance(v, str) and v in ANN_MODES, '"auto", "on" or "off"'),
    "ann_ef": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000,
        "an integer from 1 to 10000",
    ),
}


class SQLiteBackend:
    """The collections of an index directory. ``store_options`` go to each `SQLiteStore`."""

    def __init__(self, location: str | Path, **store_options: object) -> None:
        self.directory = Path(location)
        self._store_options = store_options

    @staticmethod
    def option_defaults() -> dict[str, Any]:
        """The ``[store.sqlite]`` keys at `SQLiteStore`'s defaults (``ann``'s is none: what
        the index recorded)."""
        parameters = inspect.signature(SQLiteStore.__init__).parameters
        return {k: parameters[k].default for k in _OPTIONS if parameters[k].default is not None}

    @staticmethod
    def options_from_table(table: Mapping[str, object], where: str) -> dict[str, Any]:
        """The `SQLiteStore` options a ``[store.sqlite]`` table of ragwright.toml sets:
        ``durability`` ("normal" or "full"), ``private`` (true or false), ``ann`` ("auto",
        "on" or "off": approximate vector search, overriding what `ragwright index --ann`
        recorded) and ``ann_ef`` (its search beam)."""
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
        if read_only or not create:
            self._existing(collection)
        options: dict[str, Any] = {**self._store_options, "create": create, "read_only": read_only}
        return SQLiteStore(directory, **options)

    def check(self, collection: str = DEFAULT_COLLECTION, *, quick: bool = False) -> IndexReport:
        """What is wrong with the collection's file, if anything (see `check_file`)."""
        findings, counts = check_file(self._existing(collection), quick=quick)
        return IndexReport(self.location, collection, tuple(findings), counts)

    def repair(
        self, collection: str = DEFAULT_COLLECTION, *, space_of: SpaceOf | None = None
    ) -> RepairReport:
        """Rebuild what `check` found wrong when all of it is derived from the stored text
        and vectors (the keyword index, the derived files; an older schema is upgraded on the
        way) or is a settings row it can restore or reset (`setting_repair`: a broken
        embedding space is made again by ``space_of`` from the recorded embedder spec);
        `RepairRefused` when anything else is wrong, before anything is written."""
        before = self.check(collection)
        if before.ok:
            return RepairReport(before, before, ())
        refused = [
            f"{f.name}: {f.detail}"
            for f in before.findings
            if not (f.ok or f.repairable or f.name in ELSEWHERE)
        ]
        if refused:
            raise RepairRefused(str(self._existing(collection)), refused)
        path = self._existing(collection)
        actions = repair_settings(path, broken_keys(before.findings), space_of)
        failed = {f.name for f in before.findings if not f.ok}
        with self.open(collection, create=False) as store:  # a writer upgrades an old schema
            version = before.counts.get("schema_version", SCHEMA_VERSION)
            if version < SCHEMA_VERSION:
                actions.append(f"upgraded the schema from version {version} to {SCHEMA_VERSION}")
            if failed & {"fts_integrity", "fts_rows"}:
                store.rebuild_keyword_index()
                actions.append("rebuilt the keyword index (FTS5) from the stored chunk text")
            damaged = damaged_suffixes(before.findings)
            built = store.rebuild_derived_files(damaged)
            for suffix in damaged:
                name = DATABASE_NAME + suffix
                done = (
                    "rebuilt it from the database" if name in built else "it is built when needed"
                )
                actions.append(f"deleted the damaged derived file {name}; {done}")
        return RepairReport(before, self.check(collection), tuple(actions))

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

    def _existing(self, collection: str) -> Path:
        """The database file of a collection that exists (`UnknownCollection` otherwise)."""
        path = self._directory(collection) / DATABASE_NAME
        if path.is_file():
            return path
        if collection == DEFAULT_COLLECTION:
            where = self.directory
            raise StoreError(f"no index at {where}; create one with `ragwright ingest PATH`")
        raise UnknownCollection(
            f"no collection {collection!r} in the index at {self.directory}; create it with "
            f"`ragwright collections create {collection}`"
        )

    def _directory(self, collection: str) -> Path:
        if check_collection_name(collection) == DEFAULT_COLLECTION:
            return self.directory
        return self.directory / COLLECTIONS_DIR / collection
