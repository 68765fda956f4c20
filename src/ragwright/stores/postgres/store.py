"""The PostgreSQL store of one collection: documents, chunks, pgvector vectors and BM25.

It keeps the SQLite store's contract (`ragwright.testing.store_contract`), so the two are
interchangeable behind the store ports:

- a write batch is one transaction: each document replaces any stored one with its id or
  source, its chunks, vectors and postings together, and the BM25 counters move with them;
- vector search is cosine over ``vector(dim)``: exact while the candidates are few (a small
  collection, or a filter matching at most ``exact_limit`` chunks, found first and ranked
  exactly), through the HNSW index otherwise, with pgvector's iterative scan so a filter still
  fills the top k; similarity is ``1 - cosine distance``;
- keyword search is FTS5's BM25 (k1 1.2, b 0.75, FTS5's idf), computed in SQL over the postings
  with terms from FTS5's own tokenizer, so scores equal the SQLite store's;
- results are ordered by score, best first, then by chunk id; every search is one statement,
  so ranking, filtering and reading the rows see one snapshot.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql
from psycopg.types.json import Jsonb

from ragwright.errors import EmbeddingSpaceMismatch, StoreError, UnknownCollection
from ragwright.filters import Filter
from ragwright.models import (
    DEFAULT_COLLECTION,
    Arm,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    Scale,
    Section,
    StoreStats,
)
from ragwright.ports import DocumentWrite, Vectors
from ragwright.stores.checks import check_write
from ragwright.stores.fts_query import STOP_WORDS, query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.postgres.backend import lock_schema
from ragwright.stores.postgres.filters import FilterCompiler, Params
from ragwright.stores.postgres.schema import (
    HNSW_MAX_DIMENSION,
    SCHEMA_VERSION,
    STAT_SLOTS,
    ddl,
    hnsw_ddl,
    schema_name,
    vector_ddl,
)
from ragwright.stores.sqlite.keyword_matrix import K1, B
from ragwright.stores.sqlite.schema import FTS_TOKENIZER, FTS_TOKENIZERS

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.backend import PostgresBackend


_CHUNK_COLUMNS = (
    "c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, c.metadata, d.source"
)


@dataclass(frozen=True, slots=True)
class _Rows:
    """One document's rows, ready to copy in."""

    document: tuple[object, ...]
    chunks: list[tuple[object, ...]]
    postings: list[tuple[object, ...]]
    tokens: int


@dataclass(frozen=True, slots=True)
class _VectorQuery:
    vector: npt.NDArray[np.float32]
    top_k: int
    condition: sql.Composable
    params: Params
    filtered: bool
    indexed: bool = True


class PostgresStore:
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
        self._owns_backend = owns_backend
        self._filters = FilterCompiler(self.schema)
        self._statements: dict[str, sql.Composed] = {}
        self._space: EmbeddingSpace | None = None
        self._stop_words = STOP_WORDS if stop_words else frozenset()
        tokenizer = backend.run(
            lambda conn: self._prepare_schema(conn, create, fts_tokenizer),
            f"opening the collection {collection!r}",
        )
        self._terms = FTS5Terms(tokenizer)

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        self._terms.close()
        if self._owns_backend:
            self.backend.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _sql(self, text: str) -> sql.Composed:
        """``text`` with ``{s}`` naming this collection's schema (composed once per text)."""
        statement = self._statements.get(text)
        if statement is None:
            statement = sql.SQL(text).format(s=sql.Identifier(self.schema))
            self._statements[text] = statement
        return statement

    def _prepare_schema(self, conn: Connection[Any], create: bool, requested: str | None) -> str:
        """Create the schema if need be (once, whoever else is creating it), check its
        version and settle the BM25 tokenizer; all in the caller's transaction."""
        found = conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.settings",)).fetchone()
        if found is None or found[0] is None:
            if not create:
                raise _missing(self.collection, self.backend.display_url)
            lock_schema(conn, self.schema)
            conn.execute(ddl(self.schema))
            conn.execute(
                self._sql("INSERT INTO {s}.settings VALUES ('schema_version', %s) "
                          "ON CONFLICT DO NOTHING"),
                (str(SCHEMA_VERSION),),
            )  # fmt: skip
        version = _setting(conn, self._sql, "schema_version")
        if version is None or int(version) != SCHEMA_VERSION:
            raise StoreError(
                f"collection {self.collection!r} has schema version {version}, which this "
                f"ragwright does not support (expects {SCHEMA_VERSION}); re-index into a new "
                "collection"
            )
        recorded = _setting(conn, self._sql, "fts_tokenizer")
        if recorded and requested and requested != recorded:
            raise StoreError(
                f"this collection's BM25 tokenizer is {recorded!r}, not {requested!r}; it is "
                "fixed when the collection is created (re-index into a new one to change it)"
            )
        chosen = recorded or requested or FTS_TOKENIZER
        if chosen not in FTS_TOKENIZERS:
            raise StoreError(f"unknown BM25 tokenizer {chosen!r}; choose one of {FTS_TOKENIZERS}")
        if recorded is None:
            conn.execute(
                self._sql("INSERT INTO {s}.settings VALUES ('fts_tokenizer', %s) "
                          "ON CONFLICT DO NOTHING"),
                (chosen,),
            )  # fmt: skip
        return chosen

    # -- settings and the embedding space -----------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        return self.backend.run(lambda conn: _setting(conn, self._sql, key), "reading a setting")

    def set_setting(self, key: str, value: str) -> None:
        def work(conn: Connection[Any]) -> None:
            conn.execute(
                self._sql("INSERT INTO {s}.settings VALUES (%s, %s) "
                          "ON CONFLICT (key) DO UPDATE SET value = excluded.value "
                          "WHERE {s}.settings.value IS DISTINCT FROM excluded.value"),
                (key, value),
            )  # fmt: skip

        self.backend.run(work, f"writing the setting {key!r}")

    @property
    def space(self) -> EmbeddingSpace | None:
        """The recorded embedding space; read from the database until it exists (once
        recorded it never changes)."""
        if self._space is None:
            raw = self.get_setting("embedding_space")
            self._space = EmbeddingSpace(**json.loads(raw)) if raw else None
        return self._space

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the collection's embedding space — and add its vector column and HNSW
        index — or check that ``space`` is the recorded one."""
        recorded = self.space
        if recorded is None:
            recorded = self.backend.run(lambda conn: self._bind(conn, space), "binding the space")
            self._space = recorded
        if not recorded.compatible_with(space):
            raise EmbeddingSpaceMismatch(recorded.describe(), space.describe())

    def _bind(self, conn: Connection[Any], space: EmbeddingSpace) -> EmbeddingSpace:
        lock_schema(conn, self.schema)
        raw = _setting(conn, self._sql, "embedding_space")
        if raw:  # another process bound it first
            return EmbeddingSpace(**json.loads(raw))
        conn.execute(
            self._sql("INSERT INTO {s}.settings VALUES ('embedding_space', %s)"),
            (json.dumps(asdict(space), sort_keys=True),),
        )
        conn.execute(vector_ddl(self.schema, space.dimension))
        if space.dimension <= HNSW_MAX_DIMENSION:
            conn.execute(
                hnsw_ddl(self.schema, self.backend.hnsw_m, self.backend.hnsw_ef_construction)
            )
        return space

    def drop_vector_index(self) -> None:
        """Drop the HNSW index, e.g. before a bulk load (searches are exact meanwhile, and
        slow on a large collection); `create_vector_index` builds it again."""
        self.backend.run(
            lambda conn: conn.execute(self._sql("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw")),
            "dropping the vector index",
        )

    def create_vector_index(self) -> None:
        """Build the HNSW index if it is missing (after `drop_vector_index` and a bulk load)."""
        space = self.space
        if space is None or space.dimension > HNSW_MAX_DIMENSION:
            return
        statement = hnsw_ddl(self.schema, self.backend.hnsw_m, self.backend.hnsw_ef_construction)
        self.backend.run(lambda conn: conn.execute(statement), "building the vector index")

    # -- writes -------------------------------------------------------------------------------

    def upsert(
        self,
        document: Document,
        chunks: Sequence[Chunk],
        vectors: Vectors,
        fingerprint: str = "",
    ) -> None:
        """Insert or replace one document with its chunks, atomically."""
        self.write([DocumentWrite(document, chunks, vectors, fingerprint)])

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        """Insert or replace the documents of ``batch`` in one transaction. Each replaces any
        stored document with its id or its source; within the batch a later document replaces
        an earlier one the same way."""
        if not batch:
            return
        space = self.space
        if space is None:
            raise StoreError("bind an embedding space (bind_space) before writing")
        for item in batch:
            _check(item, space)
        kept = _last_of_each(batch)
        rows = self._rows(kept)
        ids = [item.document.id for item in batch]
        sources = [item.document.source for item in batch]
        self.backend.run(lambda conn: self._write(conn, ids, sources, rows), "writing documents")

    def _rows(self, batch: list[DocumentWrite]) -> list[_Rows]:
        texts = [
            _indexed_text(chunk, {**item.document.metadata, **chunk.metadata})
            for item in batch
            for chunk in item.chunks
        ]
        counted = iter(self._terms.count(texts))
        prepared = []
        for item in batch:
            document = item.document
            vectors = np.ascontiguousarray(item.vectors, dtype=np.float32)
            chunk_rows: list[tuple[object, ...]] = []
            posting_rows: list[tuple[object, ...]] = []
            tokens = 0
            for chunk, vector in zip(item.chunks, vectors, strict=True):
                counts = next(counted)
                tokens += counts.length
                metadata = {**document.metadata, **chunk.metadata}
                chunk_rows.append(
                    (chunk.id, document.id, chunk.index, chunk.text, chunk.char_start,
                     chunk.char_end, _jsonb(metadata, document.source), counts.length, vector)
                )  # fmt: skip
                posting_rows.extend(
                    (term, chunk.id, document.id, tf, counts.length)
                    for term, tf in counts.terms.items()
                )
            document_row = (
                document.id,
                document.source,
                document.content,
                document.content_hash,
                item.fingerprint or document.content_hash,
                _jsonb(document.metadata, document.source),
                _jsonb([asdict(s) for s in document.sections], document.source),
            )
            prepared.append(_Rows(document_row, chunk_rows, posting_rows, tokens))
        return prepared

    def _write(
        self, conn: Connection[Any], ids: list[str], sources: list[str], rows: list[_Rows]
    ) -> None:
        # Writers of the same documents queue here (in one order: no deadlock) instead of
        # failing on each other's unique keys.
        conn.execute(
            "SELECT pg_advisory_xact_lock(k) FROM "
            "(SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest(%s::text[]) AS x) t "
            "ORDER BY k",
            (ids + sources,),
        )
        old = [
            r[0]
            for r in conn.execute(
                self._sql("SELECT id FROM {s}.documents WHERE id = ANY(%s) OR source = ANY(%s)"),
                (ids, sources),
            )
        ]
        removed_chunks = removed_tokens = 0
        if old:
            conn.execute(self._sql("DELETE FROM {s}.postings WHERE document_id = ANY(%s)"), (old,))
            removed = conn.execute(
                self._sql("WITH gone AS (DELETE FROM {s}.chunks WHERE document_id = ANY(%s) "
                          "RETURNING tokens) SELECT count(*), coalesce(sum(tokens), 0) FROM gone"),
                (old,),
            ).fetchone()  # fmt: skip
            assert removed is not None
            removed_chunks, removed_tokens = int(removed[0]), int(removed[1])
            conn.execute(self._sql("DELETE FROM {s}.documents WHERE id = ANY(%s)"), (old,))
        self._copy(conn, "documents", _DOCUMENT_COPY, [r.document for r in rows])
        self._copy(conn, "chunks", _CHUNK_COPY, [c for r in rows for c in r.chunks])
        self._copy(conn, "postings", _POSTING_COPY, [p for r in rows for p in r.postings])
        added_chunks = sum(len(r.chunks) for r in rows)
        added_tokens = sum(r.tokens for r in rows)
        self._count(conn, added_chunks - removed_chunks, added_tokens - removed_tokens)

    def _copy(
        self,
        conn: Connection[Any],
        table: str,
        columns: tuple[tuple[str, str], ...],
        rows: list[tuple[object, ...]],
    ) -> None:
        if not rows:
            return
        statement = sql.SQL("COPY {}.{} ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.Identifier(self.schema),
            sql.Identifier(table),
            sql.SQL(", ").join(sql.Identifier(name) for name, _ in columns),
        )
        with conn.cursor().copy(statement) as copy:
            copy.set_types([kind for _, kind in columns])
            for row in rows:
                copy.write_row(row)

    def _count(self, conn: Connection[Any], chunks: int, tokens: int) -> None:
        """Move the BM25 counters, last in the transaction: the counter row is then held only
        while committing, so writers sharing a row wait briefly and never deadlock."""
        if chunks or tokens:
            conn.execute(
                self._sql("UPDATE {s}.bm25_stats SET chunks = chunks + %s, tokens = tokens + %s "
                          f"WHERE slot = pg_backend_pid() %% {STAT_SLOTS}"),
                (chunks, tokens),
            )  # fmt: skip

    def delete(self, document_id: str) -> bool:
        """Delete a document and everything derived from it. True when it existed."""
        return self.delete_many([document_id]) == 1

    def delete_many(self, document_ids: Iterable[str]) -> int:
        """Delete documents by id in one transaction; returns how many existed."""
        ids = list(dict.fromkeys(document_ids))
        if not ids:
            return 0

        def work(conn: Connection[Any]) -> int:
            conn.execute(
                "SELECT pg_advisory_xact_lock(k) FROM "
                "(SELECT DISTINCT hashtextextended(x, 0) AS k FROM unnest(%s::text[]) AS x) t "
                "ORDER BY k",
                (ids,),
            )
            conn.execute(self._sql("DELETE FROM {s}.postings WHERE document_id = ANY(%s)"), (ids,))
            removed = conn.execute(
                self._sql("WITH gone AS (DELETE FROM {s}.chunks WHERE document_id = ANY(%s) "
                          "RETURNING tokens) SELECT count(*), coalesce(sum(tokens), 0) FROM gone"),
                (ids,),
            ).fetchone()  # fmt: skip
            assert removed is not None
            deleted = conn.execute(
                self._sql("DELETE FROM {s}.documents WHERE id = ANY(%s)"), (ids,)
            ).rowcount
            self._count(conn, -int(removed[0]), -int(removed[1]))
            return deleted

        return self.backend.run(work, "deleting documents")

    # -- documents ----------------------------------------------------------------------------

    def get_document(self, document_id: str) -> Document | None:
        rows = self._query(
            "SELECT id, source, content, metadata, sections FROM {s}.documents WHERE id = %s",
            (document_id,),
        )
        if not rows:
            return None
        id_, source, content, metadata, sections = rows[0]
        return Document(
            id=id_,
            source=source,
            content=content,
            metadata=MappingProxyType(metadata),
            sections=tuple(_section(s) for s in sections),
        )

    def find_document(self, source: str) -> Document | None:
        rows = self._query("SELECT id FROM {s}.documents WHERE source = %s", (source,))
        return self.get_document(rows[0][0]) if rows else None

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        condition, params = self._filters.compile(where)
        if where is not None:
            condition = sql.SQL("d.id IN (SELECT c.document_id FROM {}.chunks c WHERE {})").format(
                sql.Identifier(self.schema), condition
            )
        statement = sql.SQL(
            "SELECT d.id, d.source, d.content_hash, "
            "(SELECT count(*) FROM {s}.chunks c WHERE c.document_id = d.id), length(d.content), "
            "d.metadata FROM {s}.documents d WHERE {condition} ORDER BY d.source"
        ).format(s=sql.Identifier(self.schema), condition=condition)
        rows = self._query(statement, params)
        return [
            DocumentInfo(
                id=r[0],
                source=r[1],
                content_hash=r[2],
                chunk_count=int(r[3]),
                char_count=int(r[4]),
                metadata=MappingProxyType(r[5]),
            )
            for r in rows
        ]

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document: what ingest compares to skip work."""
        return dict(self._query("SELECT source, fingerprint FROM {s}.documents"))

    def stats(self) -> StoreStats:
        row = self._query(
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

    # -- chunks -------------------------------------------------------------------------------

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM {{s}}.chunks c JOIN {{s}}.documents d "
            "ON d.id = c.document_id WHERE c.id = ANY(%s)",
            (list(dict.fromkeys(chunk_ids)),),
        )
        return {row[0]: _chunk(row) for row in rows}

    def chunks_of(self, document_id: str) -> list[Chunk]:
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM {{s}}.chunks c JOIN {{s}}.documents d "
            "ON d.id = c.document_id WHERE c.document_id = %s ORDER BY c.idx",
            (document_id,),
        )
        return [_chunk(row) for row in rows]

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks in chunk-id order, starting after the id ``after`` (paging
        by key: a page boundary never moves when documents change)."""
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM {{s}}.chunks c JOIN {{s}}.documents d "
            "ON d.id = c.document_id WHERE c.id > %s ORDER BY c.id LIMIT %s",
            (after or "", max(0, limit)),
        )
        return [_chunk(row) for row in rows]

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of these chunks; unknown ids are absent."""
        if self.space is None:
            return {}
        rows = self._query(
            "SELECT id, embedding FROM {s}.chunks WHERE id = ANY(%s)",
            (list(dict.fromkeys(chunk_ids)),),
        )
        return {r[0]: np.array(r[1].to_numpy(), dtype=np.float32) for r in rows}

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        """Chunks by (document id, index); negative indices count from the end. Unknown pairs
        are absent. The pairs are matched as pairs in one statement (one snapshot)."""
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        rows = self._query(
            "WITH wanted AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS w(document_id, idx)), "
            "counts AS (SELECT c.document_id, count(*) AS n FROM {s}.chunks c "
            "  WHERE c.document_id IN (SELECT document_id FROM wanted) GROUP BY c.document_id) "
            f"SELECT w.document_id, w.idx, {_CHUNK_COLUMNS} FROM wanted w "
            "JOIN counts n ON n.document_id = w.document_id "
            "JOIN {s}.chunks c ON c.document_id = w.document_id "
            "  AND c.idx = CASE WHEN w.idx < 0 THEN w.idx + n.n ELSE w.idx END "
            "JOIN {s}.documents d ON d.id = c.document_id",
            ([d for d, _ in wanted], [i for _, i in wanted]),
        )
        return {(row[0], row[1]): _chunk(row[2:]) for row in rows}

    # -- search -------------------------------------------------------------------------------

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        """Cosine top-k: exact over the filter's matches when they are few (or the collection
        is small), else through the HNSW index with an iterative scan."""
        condition, params = self._filters.compile(where)  # refuses a bad filter first
        space = self.space
        if space is None or top_k <= 0:
            return []
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if vector.shape[0] != space.dimension:
            raise StoreError(
                f"query vector has dimension {vector.shape[0]}, the index {space.dimension}"
            )
        if not np.isfinite(vector).all():
            raise StoreError("the query vector contains NaN or infinity")
        search = _VectorQuery(vector, top_k, condition, params, where is not None)
        if space.dimension > HNSW_MAX_DIMENSION:
            search = dataclasses.replace(search, indexed=False)
        rows = self.backend.run(
            lambda conn: self._vector_rows(conn, search),
            "vector search",
        )
        return _hits(rows, Scale.SIMILARITY, Arm.VECTOR)

    def _vector_rows(self, conn: Connection[Any], search: _VectorQuery) -> list[Any]:
        vector, top_k, condition, params = (
            search.vector,
            search.top_k,
            search.condition,
            search.params,
        )
        if not float(np.linalg.norm(vector)) > 0:  # no direction: every similarity is 0
            return conn.execute(self._ranked(_ZERO_QUERY, condition), [*params, top_k]).fetchall()
        if search.indexed and not self._few_candidates(conn, search):
            conn.execute(
                f"SET LOCAL hnsw.ef_search = {min(max(self.backend.hnsw_ef_search, top_k), 1000)}; "
                "SET LOCAL hnsw.iterative_scan = relaxed_order"
            )
            rows = conn.execute(self._ranked(_HNSW, condition), [vector, *params, top_k]).fetchall()
            if len(rows) >= top_k:
                return rows
            # the index ran out before k rows passed the filter: rank the matches exactly
        return conn.execute(self._ranked(_EXACT, condition), [vector, *params, top_k]).fetchall()

    def _few_candidates(self, conn: Connection[Any], search: _VectorQuery) -> bool:
        """Whether at most ``exact_limit`` chunks can be returned: then an exact ranking of
        them costs less than the index and is never wrong. Counts at most that many."""
        limit = self.backend.exact_limit
        if not search.filtered:
            row = conn.execute(
                self._sql("SELECT coalesce(sum(chunks), 0) FROM {s}.bm25_stats")
            ).fetchone()
        else:
            statement = sql.SQL(
                "SELECT count(*) FROM (SELECT 1 FROM {}.chunks c WHERE {} LIMIT %s) t"
            ).format(sql.Identifier(self.schema), search.condition)
            row = conn.execute(statement, [*search.params, limit + 1]).fetchone()
        return row is not None and int(row[0]) <= limit

    def _ranked(self, ranking: str, condition: sql.Composable) -> sql.Composed:
        """A ranking (a query over chunks c selecting id and score, with the filter in
        ``{where}``) joined to the rows it ranks, in one statement."""
        return sql.SQL(
            "WITH ranked AS MATERIALIZED (" + ranking + ") "
            f"SELECT {_CHUNK_COLUMNS}, r.score FROM ranked r "
            "JOIN {s}.chunks c ON c.id = r.id JOIN {s}.documents d ON d.id = c.document_id "
            "ORDER BY r.score DESC, c.id"
        ).format(s=sql.Identifier(self.schema), where=condition)

    def keyword_search(self, query: str, top_k: int, where: Filter | None = None) -> list[Hit]:
        """FTS5's BM25 over the postings, best first; scores are positive."""
        condition, params = self._filters.compile(where)
        words = query_terms(query, self._stop_words)
        if top_k <= 0 or not words:
            return []
        terms = self._terms.terms(" ".join(words))
        if not terms:
            return []
        filtered = where is not None
        statement = self._bm25_statement(condition, filtered)
        arguments = [list(terms), list(terms.values()), *params, top_k]
        rows = self.backend.run(
            lambda conn: conn.execute(statement, arguments).fetchall(), "keyword search"
        )
        return _hits(rows, Scale.BM25, Arm.BM25)

    def _bm25_statement(self, condition: sql.Composable, filtered: bool) -> sql.Composed:
        """FTS5's bm25(): for a term in ``hits`` of ``rows`` chunks, ``idf = ln((rows - hits
        + 0.5) / (hits + 0.5))`` floored at 1e-6; a chunk of ``dl`` tokens with ``tf`` of them
        scores ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, summed over the
        query's terms (counted as often as they occur in the query). Document frequencies
        are counted live (one index range per query term); the chunk count and average
        length come from the striped counters. A filter restricts the postings to the
        matching chunks first, so a selective filter reads few postings."""
        restrict, join = "", ""
        if filtered:
            restrict = ", allowed AS MATERIALIZED (SELECT c.id FROM {s}.chunks c WHERE {where})"
            join = "JOIN allowed a ON a.id = p.chunk_id "
        ranking = (
            "WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, qtf)), "
            "n AS MATERIALIZED (SELECT sum(chunks)::float8 AS rows, "
            f"  {K1 * (1 - B)!r}::float8 AS base, {K1 * B!r}::float8 / "
            "  greatest(sum(tokens)::float8 / greatest(sum(chunks), 1), 1e-9) AS slope "
            "  FROM {s}.bm25_stats), "
            "df AS MATERIALIZED (SELECT q.term, q.qtf, "
            "  (SELECT count(*) FROM {s}.postings p WHERE p.term = q.term) AS hits FROM q), "
            f"w AS MATERIALIZED (SELECT df.term, df.qtf * {K1 + 1!r}::float8 * "
            "  greatest(ln((n.rows - df.hits + 0.5) / (df.hits + 0.5)), 1e-6) AS weight "
            f"  FROM df, n WHERE df.hits > 0){restrict} "
            "SELECT p.chunk_id AS id, "
            "sum(w.weight * p.tf / (p.tf + n.base + n.slope * p.dl)) AS score "
            f"FROM w JOIN {{s}}.postings p ON p.term = w.term {join}CROSS JOIN n "
            "GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
        )
        return self._ranked(ranking, condition)

    # -- plumbing -----------------------------------------------------------------------------

    def _query(self, statement: str | sql.Composed, params: Sequence[object] = ()) -> list[Any]:
        composed = self._sql(statement) if isinstance(statement, str) else statement
        return self.backend.run(
            lambda conn: conn.execute(composed, params).fetchall(), "reading the index"
        )


_EXACT = (
    "SELECT c.id, coalesce(nullif(1 - (c.embedding <=> %s), 'NaN'), 0) AS score "
    "FROM {s}.chunks c WHERE {where} ORDER BY score DESC, c.id LIMIT %s"
)
_HNSW = (
    "SELECT h.id, 1 - h.distance AS score FROM (SELECT c.id, c.embedding <=> %s AS distance "
    "FROM {s}.chunks c WHERE {where} ORDER BY distance LIMIT %s) h"
)
_ZERO_QUERY = (
    "SELECT c.id, 0.0::float8 AS score FROM {s}.chunks c WHERE {where} ORDER BY c.id LIMIT %s"
)

_DOCUMENT_COPY = (
    ("id", "text"), ("source", "text"), ("content", "text"), ("content_hash", "text"),
    ("fingerprint", "text"), ("metadata", "jsonb"), ("sections", "jsonb"),
)  # fmt: skip
_CHUNK_COPY = (
    ("id", "text"), ("document_id", "text"), ("idx", "int4"), ("text", "text"),
    ("char_start", "int4"), ("char_end", "int4"), ("metadata", "jsonb"), ("tokens", "int4"),
    ("embedding", "vector"),
)  # fmt: skip
_POSTING_COPY = (
    ("term", "text"), ("chunk_id", "text"), ("document_id", "text"), ("tf", "int4"),
    ("dl", "int4"),
)  # fmt: skip


def _check(item: DocumentWrite, space: EmbeddingSpace) -> None:
    """Refuse what every store refuses, and text PostgreSQL cannot hold."""
    check_write(item, space)
    if "\x00" in item.document.content or "\x00" in item.document.source:
        raise StoreError(f"{item.document.source}: PostgreSQL text cannot hold NUL characters")


def _missing(collection: str, location: str) -> StoreError:
    if collection == DEFAULT_COLLECTION:
        return StoreError(
            f"no index at {location}; create one with `ragwright ingest PATH --index {location}`"
        )
    return UnknownCollection(
        f"no collection {collection!r} in the index at {location}; create it with "
        f"`ragwright collections create {collection}`"
    )


def _last_of_each(batch: Sequence[DocumentWrite]) -> list[DocumentWrite]:
    """The documents that survive the batch: one replaced by a later document with its id or
    source is dropped (in batch order, as if written one by one)."""
    ids: set[str] = set()
    sources: set[str] = set()
    kept: list[DocumentWrite] = []
    for item in reversed(batch):
        if item.document.id not in ids and item.document.source not in sources:
            kept.append(item)
        ids.add(item.document.id)
        sources.add(item.document.source)
    return kept[::-1]


def _indexed_text(chunk: Chunk, metadata: dict[str, Any]) -> str:
    """What BM25 indexes: the text after the header of the table it continues, exactly as the
    SQLite store's FTS5 trigger builds it from the merged metadata."""
    header = metadata.get("table_header")
    return f"{header}\n{chunk.text}" if isinstance(header, str) else chunk.text


def _jsonb(value: object, source: str) -> Jsonb:
    """``value`` as jsonb, serialized now so a bad value is refused before the transaction."""
    try:
        text = json.dumps(
            value, sort_keys=True, ensure_ascii=False, allow_nan=False, default=_plain
        )
    except (TypeError, ValueError) as error:
        raise StoreError(f"{source}: metadata is not JSON-serializable: {error}") from error
    if "\\u0000" in text:
        raise StoreError(f"{source}: PostgreSQL jsonb cannot hold NUL characters")
    return Jsonb(text, dumps=_verbatim)


def _verbatim(text: Any) -> str:
    return str(text)


def _plain(value: object) -> object:
    if isinstance(value, MappingProxyType):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _setting(conn: Connection[Any], compose: Any, key: str) -> str | None:
    row = conn.execute(compose("SELECT value FROM {s}.settings WHERE key = %s"), (key,)).fetchone()
    return str(row[0]) if row else None


def _section(raw: dict[str, Any]) -> Section:
    return Section(
        char_start=raw["char_start"],
        char_end=raw["char_end"],
        heading_path=tuple(raw["heading_path"]),
        level=raw["level"],
        page=raw["page"],
        metadata=raw.get("metadata", {}),
    )


def _chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[0],
        document_id=row[1],
        index=row[2],
        text=row[3],
        char_start=row[4],
        char_end=row[5],
        metadata=MappingProxyType(row[6]),
    )


def _hits(rows: list[Any], scale: Scale, arm: Arm) -> list[Hit]:
    return [
        Hit(
            chunk=_chunk(row),
            score=float(row[8]),
            scale=scale,
            arms=frozenset({arm}),
            source=row[7],
            arm_ranks=MappingProxyType({arm: rank}),
        )
        for rank, row in enumerate(rows, start=1)
    ]
