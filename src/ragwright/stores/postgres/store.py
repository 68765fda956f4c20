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

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ragwright.filters import Filter
from ragwright.models import (
    DEFAULT_COLLECTION,
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
from ragwright.ports import Checkpoint, ItemRecord
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.keyword_corpora import Corpora
from ragwright.stores.postgres.candidates import PostgresCandidates
from ragwright.stores.postgres.checkpoints import PostgresCheckpoints
from ragwright.stores.postgres.chunks import PostgresChunks
from ragwright.stores.postgres.communities import PostgresCommunities
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.documents import PostgresDocuments
from ragwright.stores.postgres.fact_vectors import PostgresFactVectors
from ragwright.stores.postgres.filter_matches import FilterMatches
from ragwright.stores.postgres.filters import FilterCompiler
from ragwright.stores.postgres.graph_reads import PostgresGraphReads
from ragwright.stores.postgres.graph_resolution import PostgresEntityResolution
from ragwright.stores.postgres.graph_scoped import PostgresScopedGraph
from ragwright.stores.postgres.graph_writes import PostgresGraphWrites
from ragwright.stores.postgres.ingest_lock import ingest_lock
from ragwright.stores.postgres.keyword_cache import KeywordCache
from ragwright.stores.postgres.metadata_index import MetadataIndex
from ragwright.stores.postgres.moves import PostgresMoves
from ragwright.stores.postgres.rechunk import PostgresRechunk
from ragwright.stores.postgres.schema import SCHEMA_VERSION, schema_name
from ragwright.stores.postgres.settings import open_schema
from ragwright.stores.postgres.spaces import PostgresSpaces
from ragwright.stores.postgres.sparse import PostgresSparse
from ragwright.stores.postgres.vector_cache import VectorCache
from ragwright.stores.postgres.writes import PostgresWrites

if TYPE_CHECKING:
    from ragwright.stores.postgres.connections import Connections


class PostgresStore(
    PostgresRechunk,  # before the writes it builds on
    PostgresWrites,
    PostgresCandidates,
    PostgresSpaces,
):
    """One collection of a PostgreSQL index. Safe to share between threads (every call takes
    a pooled connection for one transaction). Open it with `PostgresBackend.open`."""

    def __init__(
        self,
        backend: Connections,
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
        budget = backend.vector_cache_mb * 2**20
        self._vector_cache = VectorCache(self._db, budget) if budget > 0 else None
        index_budget = backend.metadata_index_mb * 2**20
        index = MetadataIndex(self._db, index_budget) if index_budget > 0 else None
        self._filter_matches = FilterMatches(self._db, index)
        self._corpora = Corpora()
        self._schema_oid = self._current_oid()
        self._documents = PostgresDocuments(self._db, self._filters)
        self._chunks = PostgresChunks(self._db, lambda: self.space)
        self._checkpoints = PostgresCheckpoints(self._db)
        self._moves = PostgresMoves(self._db)
        self._graph_writes = PostgresGraphWrites(self._db)
        self._graph_reads = PostgresGraphReads(self._db)
        self._fact_vectors = PostgresFactVectors(self._db, lambda: self.space)
        self._scoped_graph = PostgresScopedGraph(self._db, self._filters)
        self._communities = PostgresCommunities(self._db)
        self._entity_resolution = PostgresEntityResolution(self._db)
        self._sparse = PostgresSparse(self._db, self._filters)

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

    # `PostgresDocuments`.

    def get_document(self, document_id: str) -> Document | None:
        return self._documents.get_document(document_id)

    def find_document(self, source: str) -> Document | None:
        return self._documents.find_document(source)

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        return self._documents.list_documents(where)

    def fingerprints(self) -> dict[str, str]:
        return self._documents.fingerprints()

    # `PostgresChunks`.

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

    # `PostgresCheckpoints`.

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

    # `PostgresMoves`.

    def move_document(self, document_id: str, moved: Document, chunks: Sequence[Chunk]) -> bool:
        return self._moves.move_document(document_id, moved, chunks)

    # `PostgresGraphWrites`.

    def chunks_without_facts(self, extractor: str, after: str | None, limit: int) -> list[Chunk]:
        return self._graph_writes.chunks_without_facts(extractor, after, limit)

    def stored_facts(self, chunk_ids: Sequence[str]) -> list[ChunkFacts]:
        return self._graph_writes.stored_facts(chunk_ids)

    def write_facts(self, facts: Sequence[ChunkFacts]) -> FactsWritten:
        return self._graph_writes.write_facts(facts)

    # `PostgresFactVectors`.

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

    # `PostgresGraphReads`.

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

    # `PostgresScopedGraph`.

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        return self._scoped_graph.readable_graph_snapshot(readable)

    # `PostgresCommunities`.

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

    # `PostgresEntityResolution`.

    def link_synonyms(self) -> int:
        return self._entity_resolution.link_synonyms()

    def merge_entities(self, first: str, second: str) -> None:
        self._entity_resolution.merge_entities(first, second)

    def unmerge_entities(self, first: str, second: str) -> bool:
        return self._entity_resolution.unmerge_entities(first, second)

    # `PostgresSparse`.

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
