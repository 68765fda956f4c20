"""`SQLiteStore`: one collection in one SQLite database, in WAL mode.

Documents, chunks, vectors and the FTS5 BM25 index live in one database, so replacing or
deleting a document is one transaction across all of them: a reader never sees half a document
and a crashed or killed process loses nothing committed (with ``synchronous=NORMAL`` a power
loss may lose the last commits, never consistency). Each capability's code lives in its own
module (settings, writes, documents, chunks, search); this class opens the database and joins
them.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from ragwright.errors import ConfigError, StoreError
from ragwright.models import EmbeddingSpace, StoreStats
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms, settle_tokenizer
from ragwright.stores.ingest_lock import ingest_lock
from ragwright.stores.sqlite.caches import DerivedCache
from ragwright.stores.sqlite.chunks import SQLiteChunks
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import SQLiteDocuments
from ragwright.stores.sqlite.keyword_matrix import KeywordMatrix
from ragwright.stores.sqlite.schema import (
    FEATURES,
    META_DDL,
    SCHEMA_VERSION,
    ddl,
)
from ragwright.stores.sqlite.search import SQLiteSearch
from ragwright.stores.sqlite.vector_matrix import VectorMatrix
from ragwright.stores.sqlite.writes import SQLiteWrites

DATABASE_NAME = "index.sqlite3"


class SQLiteStore(SQLiteWrites, SQLiteSearch, SQLiteDocuments, SQLiteChunks):
    """Documents, chunks, vectors and BM25 in one SQLite file. Safe to share between threads."""

    def __init__(
        self,
        directory: str | Path,
        *,
        create: bool = True,
        keyword_cache: bool = True,
        background: bool = True,
        fts_tokenizer: str | None = None,
        stop_words: bool = True,
        durability: str = "normal",
        private: bool = True,
    ) -> None:
        """Open (or create) the index in ``directory``.

        ``keyword_cache`` scores BM25 in numpy from compact postings of the FTS5 index, kept
        in a derived file beside the database (``index.sqlite3.bm25``) and caught up with
        later writes: much faster than FTS5's own ``bm25()``. ``background`` builds it in a
        background thread while FTS5 answers (``False``: in the query that needs it, for
        tests and batch jobs). The vector matrix is a derived file too
        (``index.sqlite3.vectors``), built by the first vector search. Deleting either file
        loses nothing: it is rebuilt.

        ``fts_tokenizer`` (one of `FTS_TOKENIZERS`; Porter stemming by default) is fixed when
        the index is created and recorded; ``stop_words`` drops English stop words from BM25
        queries (both exist so their effect can be measured, see benchmarks/bm25_ablation.py).

        ``durability`` (`DURABILITY`): ``normal`` survives a killed process with nothing
        committed lost, but an OS crash or power loss may roll back the last commits;
        ``full`` syncs every commit to disk, so those survive too (slower writes). ``private``
        creates a new index directory readable by its owner only (0700) and its database file
        0600; ``False`` leaves both to the umask, for an index shared between users."""
        self.directory = Path(directory)
        self.path = self.directory / DATABASE_NAME
        if not self.path.exists() and not create:
            raise StoreError(
                f"no index at {self.directory}; create one with `ragwright ingest PATH`"
            )
        self._space: EmbeddingSpace | None = None
        try:
            _create_files(self.path, private)
            self._db = Database(self.path, synchronous=durability_pragma(durability))
            self._db.connection.executescript(META_DDL)
            tokenizer = self._fts_tokenizer(fts_tokenizer)
            self._db.connection.executescript(ddl(tokenizer))
            self._add_features()
            self._check_schema_version()
            self.set_setting("fts_tokenizer", tokenizer)
            self._cache_key = self._derived_cache_key()
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open the index at {self.path}: {error}") from error
        self._keyword_cache = keyword_cache
        self._background = background
        self._vectors: DerivedCache[VectorMatrix] | None = None
        self._keywords: DerivedCache[KeywordMatrix] | None = None
        self._tokenizer = FTS5Terms(tokenizer)
        self._stop_words = STOP_WORDS if stop_words else frozenset()

    def close(self) -> None:
        self._db.close()
        self._tokenizer.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ingest_lock(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        """This collection's ingest lock (a file lock in its directory, see `ingest_lock`)."""
        return ingest_lock(self.directory, waiting)

    def stats(self) -> StoreStats:
        documents, characters = self._db.query(
            "SELECT count(*), coalesce(sum(length(content)), 0) FROM documents"
        )[0]
        chunks = self._db.query("SELECT count(*) FROM chunks")[0][0]
        size = sum(_size(p) for p in self.directory.glob(DATABASE_NAME + "*"))
        return StoreStats(documents, chunks, characters, size, self.space, SCHEMA_VERSION)

    def _fts_tokenizer(self, requested: str | None) -> str:
        recorded = self.get_setting("fts_tokenizer")
        return settle_tokenizer(recorded, requested, "index", "a new directory")

    def _add_features(self) -> None:
        """The additive schema features this index lacks, each in one transaction (an index
        that has them all is not written to: opening never waits for a writer)."""
        for flag, script in FEATURES.items():
            if self.get_setting(flag) is None:
                self._db.connection.executescript(script)

    def _derived_cache_key(self) -> str:
        """This index's identity in its derived files: a file from another index (a copied
        directory, a restored database) never passes for this one's."""
        key = self.get_setting("derived_cache_key")
        if key is None:
            key = secrets.token_hex(16)
            self.set_setting("derived_cache_key", key)
        return key

    def _check_schema_version(self) -> None:
        found = self.get_setting("schema_version")
        if found is None:
            self.set_setting("schema_version", str(SCHEMA_VERSION))
        elif int(found) != SCHEMA_VERSION:
            raise StoreError(
                f"index schema version {found} is not supported by this ragwright "
                f"(expects {SCHEMA_VERSION}); re-index into a new directory"
            )


#: ``durability`` setting → SQLite's ``synchronous`` pragma.
DURABILITY = {"normal": "NORMAL", "full": "FULL"}


def durability_pragma(durability: str) -> str:
    if durability not in DURABILITY:
        raise ConfigError(f"durability must be one of {', '.join(DURABILITY)}, not {durability!r}")
    return DURABILITY[durability]


def _size(path: Path) -> int:
    """A file's size; 0 for one gone since it was listed (a derived file being replaced)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _create_files(path: Path, private: bool) -> None:
    """The index directory and an empty database file, owner-only when ``private`` (SQLite
    gives its WAL and shared-memory files the database file's permissions). Existing ones
    keep theirs."""
    if not private:
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    if not path.parent.exists():
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
