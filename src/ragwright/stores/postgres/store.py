"""`PostgresStore`: one collection of a PostgreSQL index: documents, chunks, pgvector vectors
and BM25.

It keeps the SQLite store's contract (`ragwright.testing.store_contract`), so the two are
interchangeable behind the store ports:

- a write batch is one transaction: each document replaces any stored one with its id or
  source, its chunks, vectors and postings together, and the BM25 counters move with them
  (`writes`);
- vector search is cosine, exact while the candidates are few and through the HNSW index
  otherwise, chosen inside one statement sent with the space check (`vector_search`,
  `vector_plan`); keyword search is FTS5's BM25, scored from a cache of the
  postings in this process kept exact by a change log (in SQL while it is built), scores equal
  to the SQLite store's (`keyword_search`, `keyword_cache`); hybrid search takes both arms'
  candidates from one snapshot in two round trips (`candidates`);
- results are ordered by score, best first, then by chunk id (from the keyword cache: by
  row, in the order written, as the SQLite store orders them); ranking, filtering and reading
  the rows see one snapshot;
- ingest runs into one collection are serialized by an advisory lock (`ingest_lock`).

Each capability's code lives in its own module (settings, writes, documents, chunks, vector
and keyword search), all running their statements through one `SchemaDatabase`; this class
opens the collection and joins them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ragwright.models import DEFAULT_COLLECTION, EmbeddingSpace, StoreStats
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.keyword_corpora import Corpora
from ragwright.stores.postgres.candidates import PostgresCandidates
from ragwright.stores.postgres.checkpoints import PostgresCheckpoints
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.communities import PostgresCommunities
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.documents import PostgresDocuments
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.graph_reads import PostgresGraphReads
from ragwright.stores.postgres.graph_refresh import CachedGraph
from ragwright.stores.postgres.graph_resolution import PostgresEntityResolution
from ragwright.stores.postgres.graph_scoped import PostgresScopedGraph
from ragwright.stores.postgres.graph_writes import PostgresGraphWrites
from ragwright.stores.postgres.ingest_lock import ingest_lock
from ragwright.stores.postgres.keyword_cache import KeywordCache
from ragwright.stores.postgres.moves import PostgresMoves
from ragwright.stores.postgres.rechunk import PostgresRechunk
from ragwright.stores.postgres.schema import SCHEMA_VERSION, schema_name
from ragwright.stores.postgres.settings import open_schema
from ragwright.stores.postgres.spaces import PostgresSpaces
from ragwright.stores.postgres.sparse import PostgresSparse
from ragwright.stores.postgres.writes import PostgresWrites

if TYPE_CHECKING:
    from ragwright.stores.postgres.backend import PostgresBackend


class PostgresStore(
    PostgresRechunk,  # before the writes it builds on
    PostgresWrites,
    PostgresMoves,
    PostgresCheckpoints,
    PostgresCandidates,
    PostgresDocuments,
    PostgresChunks,
    PostgresGraphWrites,
    PostgresGraphReads,
    PostgresScopedGraph,
    PostgresCommunities,
    PostgresEntityResolution,
    PostgresSpaces,
    PostgresSparse,
):
    """One collection of a PostgreSQL index. Safe to share between threads (every call takes
    a pooled connection for one transaction). Open it with `PostgresBackend.open`."""

    def __init__(
        self,
        backend: PostgresBackend,
        collection: str = DEFAULT_COLLECTION,
        *,
        create: bool = True,
        owns_backend: bool = False,
        fts_tokenizer: str | None = None,
        stop_words: bool = True,
    ) -> None:
        self.backend = backend
        self.collection = collection
        self.schema = schema_name(collection)
        self._db = SchemaDatabase(backend, self.schema)
        self._owns_backend = owns_backend
        self._filters = FilterCompiler(self.schema)
        self._space: EmbeddingSpace | None = None
        self._stop_words = STOP_WORDS if stop_words else frozenset()
        tokenizer = self._db.run(
            lambda conn: open_schema(self._db, conn, collection, create, fts_tokenizer),
            f"opening the collection {collection!r}",
        )
        self._terms = FTS5Terms(tokenizer)
        self._keyword_cache = KeywordCache(self._db) if backend.keyword_cache else None
        self._corpora = Corpora()
        self._graph_lock = threading.Lock()
        self._graph_cache: CachedGraph | None = None
        self._schema_oid = self._current_oid()

    def is_current(self) -> bool:
        """Whether this collection's schema is still the one it opened (a dropped collection's
        schema is gone; one created again is a new schema, with a new oid)."""
        return self._current_oid() == self._schema_oid

    def _current_oid(self) -> int | None:
        rows = self._db.query("SELECT oid FROM pg_namespace WHERE nspname = %s", (self.schema,))
        return int(rows[0][0]) if rows else None

    def ingest_lock(
        self, waiting: Callable[[], None] | None = None
    ) -> AbstractContextManager[None]:
        """This collection's ingest lock (an advisory lock on the server, see `ingest_lock`)."""
        return ingest_lock(self.backend, self.schema, waiting)

    def close(self) -> None:
        self._terms.close()
        if self._owns_backend:
            self.backend.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def stats(self) -> StoreStats:
        row = self._db.query(
            "SELECT (SELECT count(*) FROM {s}.documents), "
            "(SELECT coalesce(sum(length(content)), 0) FROM {s}.documents), "
            "(SELECT coalesce(sum(chunks), 0) FROM {s}.bm25_stats), "
            "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            " JOIN pg_namespace n ON n.oid = c.relnamespace "
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'm'))",
            (self.schema,),
        )[0]
        return StoreStats(
            int(row[0]), int(row[2]), int(row[1]), int(row[3]), self.space, SCHEMA_VERSION
        )
