"""The embedded store: an index directory with one SQLite database per collection.

`SQLiteBackend` opens the collections; `SQLiteStore` is one of them. The capabilities of a
store each have their own module (settings, writes, documents, chunks, search), over one
`Database` connection.
"""

from ragwright.stores.sqlite.backend import SQLiteBackend
from ragwright.stores.sqlite.store import DATABASE_NAME, SQLiteStore

__all__ = ["DATABASE_NAME", "SQLiteBackend", "SQLiteStore"]
