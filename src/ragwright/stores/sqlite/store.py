"""`SQLiteStore`: one collection in one SQLite database, in WAL mode.

Documents, chunks, vectors and the FTS5 BM25 index live in one database, so replacing or
deleting a document is one transaction across all of them: a reader never sees half a document
and a crashed or killed process loses nothing committed (with ``synchronous=NORMAL`` a power
loss may lose the last commits, never consistency). Each capability is an object of its own
module (settings, writes, documents, chunks, search, the graph's parts...) that takes the
`Database` and what else it needs, so it can be built and tested alone; this class opens the
database, builds them once and hands each call to its capability.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragwright.errors import ConfigError, IndexDamaged, MissingDependencyError, StoreError
from ragwright.filters import Filter
from ragwright.models import (
    FTS5_BM25,
    BM25Parameters,
    CandidateRankings,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    StoreStats,
)
from ragwright.models.communities import (
    CommunityBuild,
    CommunityReport,
    StoredCommunity,
    StoredReport,
)
from ragwright.models.graph import ChunkFacts, FactVectors, GraphSnapshot, StatedFact, TypedFact
from ragwright.models.graph_records import EntityInfo, FactsWritten, GraphStats
from ragwright.models.sparse import SparseVector
from ragwright.ports import (
    Checkpoint,
    ChunkBatch,
    Chunking,
    ChunkingStatus,
    ChunkingSwapped,
    DocumentWrite,
    ItemRecord,
    Slot,
    SpaceStatus,
    StoredText,
    Vectors,
)
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms, settle_tokenizer
from ragwright.stores.ingest_lock import ingest_lock
from ragwright.stores.sqlite.ann_choice import ANN_MODES, ANN_SETTING, DEFAULT_EF, AnnChoice
from ragwright.stores.sqlite.cache_kinds import CACHE_SUFFIXES
from ragwright.stores.sqlite.change_log import covered_by_files, prune
from ragwright.stores.sqlite.checkpoints import SQLiteCheckpoints
from ragwright.stores.sqlite.chunks import SQLiteChunks
from ragwright.stores.sqlite.communities import SQLiteCommunities
from ragwright.stores.sqlite.creation import create_index_file
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import SQLiteDocuments
from ragwright.stores.sqlite.fact_vectors import SQLiteFactVectors
from ragwright.stores.sqlite.faiss_library import INSTALL, available
from ragwright.stores.sqlite.graph_reads import SQLiteGraphReads
from ragwright.stores.sqlite.graph_resolution import SQLiteEntityResolution
from ragwright.stores.sqlite.graph_scoped import SQLiteScopedGraph
from ragwright.stores.sqlite.graph_writes import SQLiteGraphWrites
from ragwright.stores.sqlite.moves import SQLiteMoves
from ragwright.stores.sqlite.opening import EMPTY_FILE, settle_schema
from ragwright.stores.sqlite.permissions import EMPTY_READERS_DDL
from ragwright.stores.sqlite.rechunk import SQLiteRechunk
from ragwright.stores.sqlite.schema import FEATURES, SCHEMA_VERSION
from ragwright.stores.sqlite.search import SQLiteSearch
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.sqlite.spaces import SQLiteSpaces
from ragwright.stores.sqlite.sparse import SQLiteSparse
from ragwright.stores.sqlite.table_headers import EMPTY_HEADERS_DDL
from ragwright.stores.sqlite.writes import SQLiteWrites
from ragwright.stores.writes import SingleWrites

DATABASE_NAME = "index.sqlite3"


class SQLiteStore(SingleWrites):
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
        synchronous = durability_pragma(durability)
        if not self.path.exists():  # and create, not read_only (see above)
            _create_directory(self.directory, private)
            fresh = settle_tokenizer(None, fts_tokenizer, "index", "a new directory")
            create_index_file(self.path, fresh, private=private)
        self._db = Database(self.path, synchronous=synchronous, read_only=read_only)
        self._settings = SQLiteSettings(self._db)
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
        recorded = self.get_setting(ANN_SETTING) if ann is None else None
        if recorded in ANN_MODES:  # what `ragwright index --ann` chose for this index
            choice = AnnChoice(recorded, ann_ef)
        self._tokenizer = FTS5Terms(tokenizer)
        self._search = SQLiteSearch(
            self._db,
            self._settings,
            self._cache_key,
            tokenizer=self._tokenizer,
            stop_words=STOP_WORDS if stop_words else frozenset(),
            ann_choice=choice,
            keyword_cache=keyword_cache,
            background=background,
        )
        self._settings.on_space_changed(self._search.forget_vectors)
        self._documents = SQLiteDocuments(self._db)
        self._chunks = SQLiteChunks(self._db)
        self._writes = SQLiteWrites(self._db, self._settings)
        self._spaces = SQLiteSpaces(self._db, self._settings)
        self._rechunk = SQLiteRechunk(self._db, self._settings)
        self._moves = SQLiteMoves(self._db)
        self._checkpoints = SQLiteCheckpoints(self._db)
        self._graph_writes = SQLiteGraphWrites(self._db)
        self._graph_reads = SQLiteGraphReads(self._db)
        self._fact_vectors = SQLiteFactVectors(self._db, self._settings)
        self._scoped_graph = SQLiteScopedGraph(self._db)
        self._communities = SQLiteCommunities(self._db)
        self._entity_resolution = SQLiteEntityResolution(self._db)
        self._sparse = SQLiteSparse(self._db)
        self._file = _file_identity(self.path)

    def is_current(self) -> bool:
        """Whether the database file at this store's path is still the one it opened (a
        dropped collection's directory is deleted; one created again has a new file). The
        open connection keeps the old file's inode allocated, so a new file cannot reuse it."""
        return _file_identity(self.path) == self._file

    def close(self) -> None:
        self._db.close()
        self._tokenizer.close()
        self._search.close()

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

    # Settings (`SQLiteSettings`).

    def get_setting(self, key: str) -> str | None:
        return self._settings.get_setting(key)

    def set_setting(self, key: str, value: str) -> None:
        self._settings.set_setting(key, value)

    @property
    def space(self) -> EmbeddingSpace | None:
        return self._settings.space

    def bind_space(self, space: EmbeddingSpace) -> None:
        self._settings.bind_space(space)

    def check_space(self, space: EmbeddingSpace, generation: int) -> None:
        self._settings.check_space(space, generation)

    def space_changed(self, space: EmbeddingSpace) -> None:
        self._settings.space_changed(space)

    # Search (`SQLiteSearch`).

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        return self._search.vector_search(query, top_k, where)

    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]:
        return self._search.keyword_search(query, top_k, where, bm25=bm25)

    def hybrid_candidates(
        self,
        text: str,
        query: Vectors,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
        question: frozenset[str] = frozenset(),
    ) -> CandidateRankings:
        return self._search.hybrid_candidates(
            text, query, top_k, where, bm25=bm25, question=question
        )

    def kept_chunks(
        self, chunk_ids: Sequence[str], keys: Mapping[str, int] | None = None
    ) -> dict[str, tuple[Chunk, str]]:
        return self._search.kept_chunks(chunk_ids, keys)

    def set_ann(self, mode: str) -> int:
        return self._search.set_ann(mode)

    def rebuild_derived_files(self, suffixes: Sequence[str]) -> list[str]:
        return self._search.rebuild_derived_files(suffixes)

    def wait_for_caches(self) -> None:
        self._search.wait_for_caches()

    # Documents (`SQLiteDocuments`) and chunks (`SQLiteChunks`).

    def get_document(self, document_id: str) -> Document | None:
        return self._documents.get_document(document_id)

    def find_document(self, source: str) -> Document | None:
        return self._documents.find_document(source)

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        return self._documents.list_documents(where)

    def fingerprints(self) -> dict[str, str]:
        return self._documents.fingerprints()

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        return self._chunks.get_chunks(chunk_ids)

    def chunks_of(self, document_id: str) -> list[Chunk]:
        return self._chunks.chunks_of(document_id)

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        return self._chunks.chunk_page(after, limit)

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        return self._chunks.chunk_vectors(chunk_ids)

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        return self._chunks.chunks_at(positions)

    # `SQLiteMoves`.

    def move_document(self, document_id: str, moved: Document, chunks: Sequence[Chunk]) -> bool:
        return self._moves.move_document(document_id, moved, chunks)

    # `SQLiteCheckpoints`.

    def checkpoint(self, source: str) -> Checkpoint:
        return self._checkpoints.checkpoint(source)

    def record_items(
        self, source: str, items: Sequence[tuple[str, ItemRecord]], removed: Sequence[str]
    ) -> None:
        self._checkpoints.record_items(source, items, removed)

    def set_cursor(self, source: str, cursor: str | None, last_run: float) -> None:
        self._checkpoints.set_cursor(source, cursor, last_run)

    def drop_checkpoint(self, source: str) -> int:
        return self._checkpoints.drop_checkpoint(source)

    def claimed_by_others(self, source: str, document_sources: Sequence[str]) -> dict[str, str]:
        return self._checkpoints.claimed_by_others(source, document_sources)

    # `SQLiteGraphWrites`.

    def chunks_without_facts(self, extractor: str, after: str | None, limit: int) -> list[Chunk]:
        return self._graph_writes.chunks_without_facts(extractor, after, limit)

    def write_facts(self, facts: Sequence[ChunkFacts]) -> FactsWritten:
        return self._graph_writes.write_facts(facts)

    def stored_facts(self, chunk_ids: Sequence[str]) -> list[ChunkFacts]:
        return self._graph_writes.stored_facts(chunk_ids)

    # `SQLiteFactVectors`.

    def chunks_without_fact_vectors(self, after: str | None, limit: int) -> list[str]:
        return self._fact_vectors.chunks_without_fact_vectors(after, limit)

    def write_fact_vectors(
        self, space: EmbeddingSpace, facts: Sequence[StatedFact], vectors: npt.ArrayLike
    ) -> int:
        return self._fact_vectors.write_fact_vectors(space, facts, vectors)

    def fact_vector_version(self) -> str:
        return self._fact_vectors.fact_vector_version()

    def fact_vectors(self, space: EmbeddingSpace) -> FactVectors:
        return self._fact_vectors.fact_vectors(space)

    # `SQLiteGraphReads`.

    def typed_facts(self) -> list[TypedFact]:
        return self._graph_reads.typed_facts()

    def graph_version(self) -> str:
        return self._graph_reads.graph_version()

    def graph_snapshot(self) -> GraphSnapshot:
        return self._graph_reads.graph_snapshot()

    def graph_stats(self) -> GraphStats:
        return self._graph_reads.graph_stats()

    def describe_entity(self, name: str, max_sites: int = 50) -> EntityInfo | None:
        return self._graph_reads.describe_entity(name, max_sites)

    # `SQLiteScopedGraph`.

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        return self._scoped_graph.readable_graph_snapshot(readable)

    # `SQLiteCommunities`.

    def community_version(self) -> str:
        return self._communities.community_version()

    def replace_communities(self, build: CommunityBuild) -> None:
        self._communities.replace_communities(build)

    def community_build(self) -> CommunityBuild | None:
        return self._communities.community_build()

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        return self._communities.communities(level)

    def community_reports(self, kind: str) -> list[StoredReport]:
        return self._communities.community_reports(kind)

    def write_reports(
        self, reports: Sequence[tuple[CommunityReport, bytes]], graph_version: str
    ) -> int:
        return self._communities.write_reports(reports, graph_version)

    # `SQLiteEntityResolution`.

    def link_synonyms(self) -> int:
        return self._entity_resolution.link_synonyms()

    def merge_entities(self, first: str, second: str) -> None:
        self._entity_resolution.merge_entities(first, second)

    def unmerge_entities(self, first: str, second: str) -> bool:
        return self._entity_resolution.unmerge_entities(first, second)

    # `SQLiteSparse`.

    def sparse_search(
        self, query: SparseVector, top_k: int, where: Filter | None = None
    ) -> list[Hit]:
        return self._sparse.sparse_search(query, top_k, where)

    def chunks_without_terms(self, limit: int) -> list[tuple[str, str]]:
        return self._sparse.chunks_without_terms(limit)

    def write_terms(self, rows: Sequence[tuple[str, SparseVector]]) -> None:
        self._sparse.write_terms(rows)

    def clear_terms(self) -> None:
        self._sparse.clear_terms()

    # `SQLiteWrites`.

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        self._writes.write(batch)

    def write_streamed(
        self, document: Document, fingerprint: str, batches: Iterable[ChunkBatch]
    ) -> int:
        return self._writes.write_streamed(document, fingerprint, batches)

    def delete_many(self, document_ids: Iterable[str]) -> int:
        return self._writes.delete_many(document_ids)

    # `SQLiteSpaces`.

    def space_status(self) -> SpaceStatus:
        return self._spaces.space_status()

    def unstaged_chunks(self, after: str | None, limit: int) -> list[Chunk]:
        return self._spaces.unstaged_chunks(after, limit)

    def stage_vectors(
        self, space: EmbeddingSpace, embedder: str, vectors: Mapping[str, Vectors]
    ) -> None:
        self._spaces.stage_vectors(space, embedder, vectors)

    def staged_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        return self._spaces.staged_search(queries, top_k)

    def swap_space(self, slot: Slot) -> None:
        self._spaces.swap_space(slot)

    def drop_space(self, slot: Slot) -> None:
        self._spaces.drop_space(slot)

    # `SQLiteRechunk`.

    def chunking_status(self) -> ChunkingStatus:
        return self._rechunk.chunking_status()

    def unstaged_documents(self, after: str | None, limit: int) -> list[StoredText]:
        return self._rechunk.unstaged_documents(after, limit)

    def stage_chunks(self, chunking: Chunking, writes: Sequence[DocumentWrite]) -> None:
        self._rechunk.stage_chunks(chunking, writes)

    def staged_documents_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        return self._rechunk.staged_documents_search(queries, top_k)

    def swap_chunking(self, slot: Slot) -> ChunkingSwapped:
        return self._rechunk.swap_chunking(slot)

    def drop_chunking(self, slot: Slot) -> None:
        self._rechunk.drop_chunking(slot)

    def _prune_change_log(self, db: sqlite3.Connection) -> None:
        """In a write transaction: drop the changes every cache file beside the index holds."""
        files = [self.path.with_name(self.path.name + s) for s in CACHE_SUFFIXES]
        through = covered_by_files(files, self._cache_key)
        if through is not None:
            prune(db, through)

    def _add_features(self) -> None:
        """The additive schema features this index lacks, each in one transaction (an index
        that has them all is not written to: opening never waits for a writer)."""
        for flag, script in FEATURES.items():
            if self.get_setting(flag) is None:
                with self._db.lock:
                    try:
                        self._db.connection.executescript(script)
                    except sqlite3.OperationalError:
                        # Another process opening this index may have added the feature
                        # between our check and our script (``ADD COLUMN`` cannot say IF NOT
                        # EXISTS): its recorded flag says so. Anything else is raised.
                        if self._db.connection.in_transaction:
                            self._db.connection.execute("ROLLBACK")
                        if self.get_setting(flag) is None:
                            raise

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
