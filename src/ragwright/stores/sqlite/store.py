"""`SQLiteStore`: one collection in one SQLite database, in WAL mode.

Documents, chunks, vectors and the FTS5 BM25 index live in one database, so replacing or
deleting a document is one transaction across all of them: a reader never sees half a document
and a crashed or killed process loses nothing committed (with ``synchronous=NORMAL`` a power
loss may lose the last commits, never consistency). Each capability's code lives in its own
module (settings, writes, documents, chunks, search); this class opens the database and joins
them.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError, IndexDamaged, MissingDependencyError, StoreError
from ragwright.models import EmbeddingSpace, StoreStats
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms, settle_tokenizer
from ragwright.stores.ingest_lock import ingest_lock
from ragwright.stores.keyword_corpora import Corpora
from ragwright.stores.keyword_matrix import KeywordMatrix
from ragwright.stores.sqlite.ann_choice import ANN_MODES, ANN_SETTING, DEFAULT_EF, AnnChoice
from ragwright.stores.sqlite.ann_index import AnnIndex
from ragwright.stores.sqlite.caches import DerivedCache
from ragwright.stores.sqlite.candidate_rows import CandidateRows
from ragwright.stores.sqlite.checkpoints import SQLiteCheckpoints
from ragwright.stores.sqlite.chunks import SQLiteChunks
from ragwright.stores.sqlite.communities import SQLiteCommunities
from ragwright.stores.sqlite.creation import create_index_file
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import SQLiteDocuments
from ragwright.stores.sqlite.faiss_library import INSTALL, available
from ragwright.stores.sqlite.graph_reads import SQLiteGraphReads
from ragwright.stores.sqlite.graph_refresh import CachedGraph
from ragwright.stores.sqlite.graph_resolution import SQLiteEntityResolution
from ragwright.stores.sqlite.graph_scoped import SQLiteScopedGraph
from ragwright.stores.sqlite.graph_writes import SQLiteGraphWrites
from ragwright.stores.sqlite.moves import SQLiteMoves
from ragwright.stores.sqlite.opening import EMPTY_FILE, settle_schema
from ragwright.stores.sqlite.permissions import EMPTY_READERS_DDL
from ragwright.stores.sqlite.rechunk import SQLiteRechunk
from ragwright.stores.sqlite.schema import FEATURES, SCHEMA_VERSION
from ragwright.stores.sqlite.search import SQLiteSearch
from ragwright.stores.sqlite.spaces import SQLiteSpaces
from ragwright.stores.sqlite.sparse import SQLiteSparse
from ragwright.stores.sqlite.table_headers import EMPTY_HEADERS_DDL
from ragwright.stores.sqlite.vector_matrix import VectorMatrix
from ragwright.stores.sqlite.writes import SQLiteWrites

DATABASE_NAME = "index.sqlite3"


class SQLiteStore(
    SQLiteWrites,
    SQLiteMoves,
    SQLiteCheckpoints,
    SQLiteSearch,
    SQLiteDocuments,
    SQLiteChunks,
    SQLiteGraphWrites,
    SQLiteGraphReads,
    SQLiteScopedGraph,
    SQLiteCommunities,
    SQLiteEntityResolution,
    SQLiteSpaces,
    SQLiteRechunk,
    SQLiteSparse,
):
    """Documents, chunks, vectors, BM25 and the entity graph in one SQLite file. Safe to
    share between threads."""

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
        read_only: bool = False,
        ann: str | None = None,
        ann_ef: int = DEFAULT_EF,
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
        0600; ``False`` leaves both to the umask, for an index shared between users.

        ``ann`` (`ANN_MODES`) chooses approximate vector search over an HNSW graph, another
        derived file (``index.sqlite3.ann``, built in the background while exact search
        answers): ``auto`` for collections of `MIN_ROWS` chunks or more, ``on`` at any size,
        ``off`` never; None uses what ``ragwright index --ann`` recorded (``auto`` if
        nothing). A filter that keeps few rows is always searched exactly within them.
        ``ann_ef`` is the graph's search beam (higher: closer to exact, slower).

        ``read_only`` opens the file with SQLite's ``mode=ro``: nothing is created, upgraded or
        written (a write is a `StoreError`), so a damaged or foreign file stays as it was. A new
        index file is made with its whole schema (`create_index_file`), so an empty file, like
        a damaged file or one that is not an index, is `IndexDamaged` for every open, and a
        schema from a newer ragwright is `IndexTooNew`."""
        choice = AnnChoice(ann or "auto", ann_ef)  # bad settings fail before anything opens
        if ann == "on" and not available():
            raise MissingDependencyError("approximate vector search (ann = on)", INSTALL)
        self.directory = Path(directory)
        self.path = self.directory / DATABASE_NAME
        if not self.path.exists() and (read_only or not create):
            raise StoreError(
                f"no index at {self.directory}; create one with `ragwright ingest PATH`"
            )
        if self.path.exists() and self.path.stat().st_size == 0:
            # Not even SQLite's header (a new file never lacks it): opening it would write one.
            raise IndexDamaged(str(self.path), EMPTY_FILE)
        self._space: EmbeddingSpace | None = None
        synchronous = durability_pragma(durability)
        if not self.path.exists():  # and create, not read_only (see above)
            _create_directory(self.directory, private)
            fresh = settle_tokenizer(None, fts_tokenizer, "index", "a new directory")
            create_index_file(self.path, fresh, private=private)
        self._db = Database(self.path, synchronous=synchronous, read_only=read_only)
        try:
            tokenizer = settle_schema(self._db, fts_tokenizer)
            if not read_only:  # indexes from before the tokenizer was recorded
                self.set_setting("fts_tokenizer", tokenizer)
                self._add_features()
            elif self.get_setting("feature_permissions") is None:
                with self._db.lock:  # no readers table yet: every document is everyone's
                    self._db.connection.executescript(EMPTY_READERS_DDL)
            if read_only and self.get_setting("feature_table_headers") is None:
                with self._db.lock:  # every header still in its chunks' metadata
                    self._db.connection.executescript(EMPTY_HEADERS_DDL)
            self._cache_key = self._derived_cache_key(read_only)
            self._db.before_commit = self._prune_change_log
        except BaseException:
            self._db.close()
            raise
        self._keyword_cache = keyword_cache
        self._background = background
        self._vectors: DerivedCache[VectorMatrix] | None = None
        self._keywords: DerivedCache[KeywordMatrix] | None = None
        self._ann: DerivedCache[AnnIndex] | None = None
        self._candidates: DerivedCache[CandidateRows] | None = None
        self._builds = threading.Lock()
        self._ann_available: bool | None = None
        self._last_filter: tuple[int, str, npt.NDArray[np.int64]] | None = None
        self._corpora = Corpora()
        recorded = self.get_setting(ANN_SETTING) if ann is None else None
        if recorded in ANN_MODES:  # what `ragwright index --ann` chose for this index
            choice = AnnChoice(recorded, ann_ef)
        self._ann_choice = choice
        self._tokenizer = FTS5Terms(tokenizer)
        self._stop_words = STOP_WORDS if stop_words else frozenset()
        self._graph_lock = threading.Lock()
        self._graph_cache: CachedGraph | None = None
        self._file = _file_identity(self.path)

    def is_current(self) -> bool:
        """Whether the database file at this store's path is still the one it opened (a
        dropped collection's directory is deleted; one created again has a new file). The
        open connection keeps the old file's inode allocated, so a new file cannot reuse it."""
        return _file_identity(self.path) == self._file

    def close(self) -> None:
        self._db.close()
        self._tokenizer.close()
        # The caches read their files in place: a closed store that someone still holds
        # should not keep them mapped.
        self._vectors = self._keywords = self._ann = self._candidates = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def ingest_lock(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        """This collection's ingest lock (a file lock in its directory, see `ingest_lock`)."""
        return ingest_lock(self.directory, waiting)

    def rebuild_keyword_index(self) -> None:
        """Build the FTS5 index again from the indexed text of every chunk (FTS5's own
        ``rebuild``), in one write transaction: the write generation it bumps makes every
        process reload its in-memory vector and keyword caches too."""
        with self._db.transaction() as db:
            db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")

    def stats(self) -> StoreStats:
        documents, characters = self._db.query(
            "SELECT count(*), coalesce(sum(length(content)), 0) FROM documents"
        )[0]
        chunks = self._db.query("SELECT count(*) FROM chunks")[0][0]
        size = sum(_size(p) for p in self.directory.glob(DATABASE_NAME + "*"))
        version = int(self.get_setting("schema_version") or SCHEMA_VERSION)
        return StoreStats(documents, chunks, characters, size, self.space, version)

    def _add_features(self) -> None:
        """The additive schema features this index lacks, each in one transaction (an index
        that has them all is not written to: opening never waits for a writer)."""
        for flag, script in FEATURES.items():
            if self.get_setting(flag) is None:
                with self._db.lock:
                    self._db.connection.executescript(script)

    def _derived_cache_key(self, read_only: bool) -> str:
        """This index's identity in its derived files: a file from another index (a copied
        directory, a restored database) never passes for this one's. A read-only open of an
        index that has none yet gets one for this process only (it writes nothing)."""
        key = self.get_setting("derived_cache_key")
        if key is None and read_only:
            return secrets.token_hex(16)
        if key is None:
            key = secrets.token_hex(16)
            self.set_setting("derived_cache_key", key)
        return key


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


def _create_directory(directory: Path, private: bool) -> None:
    """The index directory, owner-only when ``private`` (an existing one keeps its mode)."""
    try:
        if not private:
            directory.mkdir(parents=True, exist_ok=True)
        elif not directory.exists():
            directory.parent.mkdir(parents=True, exist_ok=True)
            directory.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise StoreError(f"cannot create the index directory {directory}: {error}") from error


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino
