"""A new index file appears with its whole schema, or not at all.

The schema is made in a temporary file beside the index's, which is then linked into place.
So in the course of things an index file is never empty (0 bytes) or without its tables, and
one that is has been damaged (truncated, overwritten): every command, the creating ones
included, says so (`IndexDamaged`) instead of taking it for a new, empty index.

Two processes creating one index at once each make their own temporary file; the first link
wins and the other opens what it made. Where the file system has no hard links the file is
renamed into place if nothing is there yet.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path

from ragwright.errors import StoreError
from ragwright.stores.sqlite import schema
from ragwright.stores.sqlite.database import store_error


def create_index_file(path: Path, tokenizer: str, *, private: bool) -> None:
    """An index file at ``path`` (its directory exists) with a complete schema whose FTS5
    index uses ``tokenizer``, unless another process made one there first. ``private``: the
    file is 0600, else the umask's."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.creating")
    try:
        mode = 0o600 if private else 0o666  # (less the umask)
        os.close(os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode))
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")  # recorded in the file's header
            schema.create(connection, tokenizer)
        finally:
            connection.close()  # the last connection: the WAL is checkpointed into the file
        _link_into_place(temporary, path)
    except sqlite3.Error as error:
        raise store_error(error, path, f"cannot create the index at {path}") from error
    except OSError as error:
        raise StoreError(f"cannot create the index at {path}: {error}") from error
    finally:
        for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
            leftover.unlink(missing_ok=True)


def _link_into_place(temporary: Path, path: Path) -> None:
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process created the index first: this one opens theirs
    except OSError:  # no hard links on this file system
        if not path.exists():
            os.replace(temporary, path)
