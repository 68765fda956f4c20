"""What an index file holds decides what opening it does: an older schema is upgraded only by
a writer, and an empty file, one that is no ragwright index, or one from a newer ragwright, is
a typed error naming the file (a new index is made whole, see `create_index_file`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ragwright.errors import IndexDamaged, IndexTooNew
from ragwright.stores.fts_terms import settle_tokenizer
from ragwright.stores.setting_rows import checked
from ragwright.stores.sqlite import schema
from ragwright.stores.sqlite.database import Database, store_error


def settle_schema(db: Database, requested_tokenizer: str | None) -> str:
    """The FTS5 tokenizer of the index in ``db`` once its schema is current: upgraded in place
    from an older version when ``db`` is writable (a read-only one reads an older version as
    it is). Raises `IndexDamaged` for an empty file (a new one is made whole, see
    `create_index_file`: an empty one was damaged), a file without the schema or with part of
    it, and `IndexTooNew` for a schema newer than this ragwright's."""
    names = db.names()
    if not names:
        raise IndexDamaged(str(db.path), empty_reason(db))
    version = schema_version(db, names)
    recorded = db.query("SELECT value FROM meta WHERE key = 'fts_tokenizer'")
    raw = checked(str(db.path), "fts_tokenizer", str(recorded[0][0]) if recorded else None)
    tokenizer = settle_tokenizer(raw, requested_tokenizer, "index", "a new directory")
    if version < schema.SCHEMA_VERSION and not db.read_only:
        _run(db, lambda: schema.upgrade(db.connection, tokenizer))
    return tokenizer


def schema_version(db: Database, names: set[str]) -> int:
    """The recorded schema version, checked against what the file holds."""
    if "meta" not in names:
        raise IndexDamaged(str(db.path), "the file holds tables, but no ragwright schema")
    row = db.query("SELECT value FROM meta WHERE key = 'schema_version'")
    if not row or not str(row[0][0]).isdigit():
        raise IndexDamaged(str(db.path), "the file records no schema version")
    version = int(row[0][0])
    if version > schema.SCHEMA_VERSION:
        raise IndexTooNew(str(db.path), version, schema.SCHEMA_VERSION)
    required = schema.REQUIRED if version == schema.SCHEMA_VERSION else schema.REQUIRED_V1
    missing = sorted(required - names)
    if missing:
        raise IndexDamaged(str(db.path), f"the schema is incomplete: no {', '.join(missing)}")
    return version


EMPTY_FILE = "the file is empty (0 bytes), which an index never is: it was truncated or never made"


def empty_reason(db: Database) -> str:
    if db.path.stat().st_size == 0:
        return EMPTY_FILE
    return "the file is an SQLite database without any tables"


def _run(db: Database, change: Callable[[], object]) -> None:
    with db.lock:
        try:
            change()
        except sqlite3.Error as error:
            raise store_error(error, db.path, f"cannot set up the index at {db.path}") from error
