"""The embedded store: one SQLite database per index, in WAL mode.

Documents, chunks, vectors and the FTS5 BM25 index live in one database, so replacing or
deleting a document is one transaction across all of them: a reader never sees half a document
and a crashed or killed process loses nothing committed (with ``synchronous=NORMAL`` a power
loss may lose the last commits, never consistency). Vector search is exact, in numpy, over a
matrix cached from the database and reloaded when the write generation shows that any process
wrote.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.errors import EmbeddingSpaceMismatch, StoreError
from ragwright.filters import Filter
from ragwright.models import (
    Arm,
    Chunk,
    Document,
    DocumentInfo,
    EmbeddingSpace,
    Hit,
    Scale,
    Section,
)
from ragwright.ports import DocumentWrite, Vectors
from ragwright.stores.fts_query import STOP_WORDS, match_expression, query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.keyword_matrix import KeywordMatrix
from ragwright.stores.sqlite_filters import Params, compile_filter
from ragwright.stores.sqlite_schema import (
    FTS_TOKENIZER,
    FTS_TOKENIZERS,
    META_DDL,
    SCHEMA_VERSION,
    ddl,
)
from ragwright.stores.vector_matrix import VectorMatrix

DATABASE_NAME = "index.sqlite3"
# Below SQLite's limits on expression depth (1000) and bound variables (32766).
_PAIRS_PER_QUERY = 400
_IDS_PER_QUERY = 5000

_CHUNK_COLUMNS = (
    "c.rowid, c.id, c.document_id, c.idx, c.text, c.char_start, c.char_end, c.metadata, "
    "(SELECT d.source FROM documents d WHERE d.id = c.document_id)"
)


@dataclass(frozen=True, slots=True)
class StoreStats:
    documents: int
    chunks: int
    characters: int
    database_bytes: int
    space: EmbeddingSpace | None
    schema_version: int


class SQLiteStore:
    """Documents, chunks, vectors and BM25 in one SQLite file. Safe to share between threads."""

    def __init__(
        self,
        directory: str | Path,
        *,
        create: bool = True,
        keyword_cache: bool = True,
        keyword_cache_after: int = 3,
        fts_tokenizer: str | None = None,
        stop_words: bool = True,
    ) -> None:
        """Open (or create) the index in ``directory``.

        ``keyword_cache`` scores BM25 in memory from a snapshot of the FTS5 index (loaded on
        the first keyword search, reloaded after any write): much faster for a process that
        runs many queries. It is built once ``keyword_cache_after`` queries have seen the same
        write generation; until then FTS5 answers. Turn it off for one-shot queries.

        ``fts_tokenizer`` (one of `FTS_TOKENIZERS`; Porter stemming by default) is fixed when
        the index is created and recorded; ``stop_words`` drops English stop words from BM25
        queries (both exist so their effect can be measured, see benchmarks/bm25_ablation.py)."""
        self.directory = Path(directory)
        self.path = self.directory / DATABASE_NAME
        if not self.path.exists() and not create:
            raise StoreError(
                f"no index at {self.directory}; create one with `ragwright ingest PATH`"
            )
        self._lock = threading.RLock()
        self._space: EmbeddingSpace | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(META_DDL)
            tokenizer = self._fts_tokenizer(fts_tokenizer)
            self._db.executescript(ddl(tokenizer))
            self._check_schema_version()
            self.set_setting("fts_tokenizer", tokenizer)
        except (sqlite3.Error, OSError) as error:
            raise StoreError(f"cannot open the index at {self.path}: {error}") from error
        self._matrix: VectorMatrix | None = None
        self._matrix_generation = -1
        self._keyword_cache = keyword_cache
        self._keyword_cache_after = keyword_cache_after
        self._keywords: KeywordMatrix | None = None
        self._keywords_generation = -1
        self._stale_generation, self._stale_queries = -1, 0
        self._tokenizer = FTS5Terms(tokenizer)
        self._stop_words = STOP_WORDS if stop_words else frozenset()

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that also bumps the generation readers watch."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise StoreError(f"cannot write to the index at {self.path}: {error}") from error
            try:
                yield self._db
                self._db.execute(
                    "INSERT INTO meta(key, value) VALUES ('generation', '1') "
                    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
                self._db.execute("COMMIT")
            except sqlite3.Error as error:
                self._rollback()
                raise StoreError(f"writing to the index failed: {error}") from error
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (e.g. on a full disk).
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as error:
                raise StoreError(f"index query failed: {error}") from error

    def _fts_tokenizer(self, requested: str | None) -> str:
        recorded = self.get_setting("fts_tokenizer")
        if recorded and requested and requested != recorded:
            raise StoreError(
                f"this index's BM25 tokenizer is {recorded!r}, not {requested!r}; it is fixed "
                "when the index is created (re-index into a new directory to change it)"
            )
        chosen = recorded or requested or FTS_TOKENIZER
        if chosen not in FTS_TOKENIZERS:
            raise StoreError(f"unknown BM25 tokenizer {chosen!r}; choose one of {FTS_TOKENIZERS}")
        return chosen

    def _check_schema_version(self) -> None:
        found = self.get_setting("schema_version")
        if found is None:
            self.set_setting("schema_version", str(SCHEMA_VERSION))
        elif int(found) != SCHEMA_VERSION:
            raise StoreError(
                f"index schema version {found} is not supported by this ragwright "
                f"(expects {SCHEMA_VERSION}); re-index into a new directory"
            )

    # -- settings and the embedding space ----------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_setting(self, key: str, value: str) -> None:
        if self.get_setting(key) == value:
            return  # re-runs with the same settings write nothing
        with self._transaction() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @property
    def space(self) -> EmbeddingSpace | None:
        """The recorded embedding space. Once recorded it never changes, so it is read from
        the database only until it exists (every search asks for it)."""
        if self._space is None:
            raw = self.get_setting("embedding_space")
            self._space = EmbeddingSpace(**json.loads(raw)) if raw else None
        return self._space

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the index's embedding space, or check that ``space`` is the recorded one."""
        with self._lock:
            recorded = self.space
            if recorded is None:
                self.set_setting("embedding_space", json.dumps(asdict(space), sort_keys=True))
            elif not recorded.compatible_with(space):
                raise EmbeddingSpaceMismatch(recorded.describe(), space.describe())

    # -- writes ---------------------------------------------------------------------------

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
        """Insert or replace several documents in one transaction."""
        if not batch:
            return
        rows = [self._prepare(item) for item in batch]
        with self._transaction() as db:
            for item, (document_row, chunk_rows) in zip(batch, rows, strict=True):
                db.execute(
                    "DELETE FROM documents WHERE id = ? OR source = ?",
                    (item.document.id, item.document.source),
                )
                db.execute(
                    "INSERT INTO documents(id, source, content, content_hash, fingerprint, "
                    "metadata, sections) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    document_row,
                )
                db.executemany(
                    "INSERT INTO chunks(id, document_id, idx, text, char_start, char_end, "
                    "metadata, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    chunk_rows,
                )

    def _prepare(self, item: DocumentWrite) -> tuple[tuple[object, ...], list[tuple[object, ...]]]:
        document, chunks, vectors = item.document, item.chunks, item.vectors
        space = self.space
        if space is None:
            raise StoreError("bind an embedding space (bind_space) before writing")
        if vectors.shape != (len(chunks), space.dimension):
            raise StoreError(
                f"{document.source}: {len(chunks)} chunks need vectors of shape "
                f"({len(chunks)}, {space.dimension}), got {vectors.shape}"
            )
        if not np.isfinite(vectors).all():
            raise StoreError(f"{document.source}: vectors contain NaN or infinity")
        document_row = (
            document.id,
            document.source,
            document.content,
            document.content_hash,
            item.fingerprint or document.content_hash,
            _dump_json(document.metadata, document.source),
            json.dumps([asdict(s) for s in document.sections]),
        )
        as_float32 = np.ascontiguousarray(vectors, dtype="<f4")
        chunk_rows: list[tuple[object, ...]] = []
        for chunk, vector in zip(chunks, as_float32, strict=True):
            if chunk.document_id != document.id:
                raise StoreError(f"chunk {chunk.id} belongs to another document")
            if document.content[chunk.char_start : chunk.char_end] != chunk.text:
                raise StoreError(f"chunk {chunk.id} is not an exact span of {document.source}")
            metadata = {**document.metadata, **chunk.metadata}
            chunk_rows.append(
                (
                    chunk.id,
                    chunk.document_id,
                    chunk.index,
                    chunk.text,
                    chunk.char_start,
                    chunk.char_end,
                    _dump_json(metadata, document.source),
                    vector.tobytes(),
                )
            )
        return document_row, chunk_rows

    def delete(self, document_id: str) -> bool:
        """Delete a document and everything derived from it. True when it existed."""
        return self.delete_many([document_id]) == 1

    def delete_many(self, document_ids: Iterable[str]) -> int:
        ids = list(document_ids)
        if not ids:
            return 0
        with self._transaction() as db:
            return sum(db.execute("DELETE FROM documents WHERE id = ?", (i,)).rowcount for i in ids)

    # -- documents ------------------------------------------------------------------------

    def get_document(self, document_id: str) -> Document | None:
        rows = self._query(
            "SELECT id, source, content, metadata, sections FROM documents WHERE id = ?",
            (document_id,),
        )
        if not rows:
            return None
        id_, source, content, metadata, sections = rows[0]
        return Document(
            id=id_,
            source=source,
            content=content,
            metadata=MappingProxyType(json.loads(metadata)),
            sections=tuple(_section(s) for s in json.loads(sections)),
        )

    def find_document(self, source: str) -> Document | None:
        rows = self._query("SELECT id FROM documents WHERE source = ?", (source,))
        return self.get_document(rows[0][0]) if rows else None

    def list_documents(self, where: Filter | None = None) -> list[DocumentInfo]:
        """Stored documents by source; with a filter, those having a chunk that matches."""
        condition, params = _condition(where)
        if where is not None:
            condition = f"d.id IN (SELECT c.document_id FROM chunks c WHERE {condition})"
        rows = self._query(
            "SELECT d.id, d.source, d.content_hash, "
            "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id), length(d.content), "
            f"d.metadata FROM documents d WHERE {condition} ORDER BY d.source",
            params,
        )
        return [
            DocumentInfo(
                id=r[0],
                source=r[1],
                content_hash=r[2],
                chunk_count=r[3],
                char_count=r[4],
                metadata=MappingProxyType(json.loads(r[5])),
            )
            for r in rows
        ]

    def fingerprints(self) -> dict[str, str]:
        """Source → fingerprint of every stored document: what ingest compares to skip work."""
        return dict(self._query("SELECT source, fingerprint FROM documents"))

    def stats(self) -> StoreStats:
        documents, characters = self._query(
            "SELECT count(*), coalesce(sum(length(content)), 0) FROM documents"
        )[0]
        chunks = self._query("SELECT count(*) FROM chunks")[0][0]
        size = sum(p.stat().st_size for p in self.directory.glob(DATABASE_NAME + "*"))
        return StoreStats(documents, chunks, characters, size, self.space, SCHEMA_VERSION)

    # -- chunks ---------------------------------------------------------------------------

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        for start in range(0, len(chunk_ids), _IDS_PER_QUERY):  # bounded SQL variables
            batch = list(chunk_ids[start : start + _IDS_PER_QUERY])
            marks = ", ".join("?" for _ in batch)
            rows = self._query(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE c.id IN ({marks})", batch
            )
            found.update((row[1], _chunk(row)) for row in rows)
        return found

    def chunks_of(self, document_id: str) -> list[Chunk]:
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? ORDER BY c.idx",
            (document_id,),
        )
        return [_chunk(row) for row in rows]

    def chunk_page(self, after: str | None, limit: int) -> list[Chunk]:
        """Up to ``limit`` chunks in chunk-id order, starting after the id ``after``. Paging by
        key rather than by position: a page boundary never moves when documents change."""
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (after or "", max(0, limit)),
        )
        return [_chunk(row) for row in rows]

    def chunk_vectors(self, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of these chunks, as written; unknown ids are absent."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        for start in range(0, len(chunk_ids), _IDS_PER_QUERY):
            batch = list(chunk_ids[start : start + _IDS_PER_QUERY])
            marks = ", ".join("?" for _ in batch)
            rows = self._query(f"SELECT id, vector FROM chunks WHERE id IN ({marks})", batch)
            found.update((r[0], np.frombuffer(r[1], dtype="<f4").astype(np.float32)) for r in rows)
        return found

    def chunks_at(self, positions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        """Chunks by (document id, index); negative indices count from the end. Unknown
        pairs are absent from the result."""
        wanted = list(dict.fromkeys(positions))
        if not wanted:
            return {}
        with self._lock, self._read_snapshot():  # counts and rows from one state
            return self._chunks_at(wanted)

    def _chunks_at(self, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], Chunk]:
        document_ids = sorted({d for d, _ in wanted})
        counts: dict[str, int] = {}
        for start in range(0, len(document_ids), _IDS_PER_QUERY):
            batch = document_ids[start : start + _IDS_PER_QUERY]
            marks = ", ".join("?" for _ in batch)
            counts.update(
                self._query(
                    f"SELECT document_id, count(*) FROM chunks WHERE document_id IN ({marks}) "
                    "GROUP BY document_id",
                    batch,
                )
            )
        requested_as: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for document_id, index in wanted:
            count = counts.get(document_id, 0)
            absolute = index + count if index < 0 else index
            if 0 <= absolute < count:
                requested_as.setdefault((document_id, absolute), []).append((document_id, index))
        found: dict[tuple[str, int], Chunk] = {}
        pairs = list(requested_as)
        for start in range(0, len(pairs), _PAIRS_PER_QUERY):  # SQLite caps expression depth
            some = pairs[start : start + _PAIRS_PER_QUERY]
            where = " OR ".join("(c.document_id = ? AND c.idx = ?)" for _ in some)
            params = [value for pair in some for value in pair]
            rows = self._query(f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE {where}", params)
            for row in rows:
                for key in requested_as[(row[2], row[3])]:
                    found[key] = _chunk(row)
        return found

    # -- search ---------------------------------------------------------------------------

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        """Exact cosine top-k, with the filter applied inside SQLite before ranking."""
        space = self.space
        if space is None or top_k <= 0:
            return []
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if vector.shape[0] != space.dimension:
            raise StoreError(
                f"query vector has dimension {vector.shape[0]}, the index {space.dimension}"
            )
        norm = float(np.linalg.norm(vector))
        vector = vector / norm if norm > 0 else vector
        # Ranking, filtering and reading the rows happen in one snapshot: a concurrent write
        # can never pair a ranked row id with another chunk or a stale filter result.
        with self._lock, self._read_snapshot() as generation:
            matrix = self._current_matrix(space, generation)
            positions = None
            if where is not None:
                positions = matrix.positions_of(self._matching_rowids(where))
            scored = matrix.top_k(vector, top_k, positions)
            return self._hits(scored, Scale.SIMILARITY, Arm.VECTOR)

    def keyword_search(self, query: str, top_k: int, where: Filter | None = None) -> list[Hit]:
        """BM25 over FTS5, best first; scores are positive (higher is better)."""
        words = query_terms(query, self._stop_words)
        if top_k <= 0 or not words:
            return []
        with self._lock, self._read_snapshot() as generation:
            keywords = self._current_keywords(generation)
            if keywords is None:
                scored = self._fts5_search(words, top_k, where)
            else:
                allowed = None
                if where is not None:
                    allowed = keywords.positions_of(self._matching_rowids(where))
                terms = self._tokenizer.terms(" ".join(words))
                scored = keywords.top_k(terms, top_k, allowed)
            return self._hits(scored, Scale.BM25, Arm.BM25)

    def _fts5_search(
        self, words: list[str], top_k: int, where: Filter | None
    ) -> list[tuple[int, float]]:
        """SQLite's own bm25(): the reference the in-memory cache reproduces."""
        condition, params = _condition(where)
        rows = self._query(
            "SELECT f.rowid, -bm25(chunks_fts) AS score FROM chunks_fts f "
            "JOIN chunks c ON c.rowid = f.rowid "
            f"WHERE chunks_fts MATCH ? AND {condition} ORDER BY score DESC, f.rowid LIMIT ?",
            [match_expression(words), *params, top_k],
        )
        return [(r[0], float(r[1])) for r in rows]

    def _matching_rowids(self, where: Filter) -> npt.NDArray[np.int64]:
        condition, params = compile_filter(where)
        rows = self._query(f"SELECT c.rowid FROM chunks c WHERE {condition}", params)
        return np.array([r[0] for r in rows], dtype=np.int64)

    def _hits(self, scored: list[tuple[int, float]], scale: Scale, arm: Arm) -> list[Hit]:
        if not scored:
            return []
        marks = ", ".join("?" for _ in scored)
        rows = self._query(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE c.rowid IN ({marks})",
            [rowid for rowid, _ in scored],
        )
        by_rowid = {row[0]: row for row in rows}
        hits = []
        for rank, (rowid, score) in enumerate(scored, start=1):
            row = by_rowid.get(rowid)
            if row is None:  # deleted between the ranking and this read
                continue
            hits.append(
                Hit(
                    chunk=_chunk(row),
                    score=score,
                    scale=scale,
                    arms=frozenset({arm}),
                    source=row[8],
                    arm_ranks=MappingProxyType({arm: rank}),
                )
            )
        return hits

    def _current_matrix(self, space: EmbeddingSpace, generation: int) -> VectorMatrix:
        """The cached vector matrix; reloaded when any process has written since. Call inside
        a read snapshot tagged with ``generation``."""
        if self._matrix is None or generation != self._matrix_generation:
            rows = self._db.execute("SELECT rowid, vector FROM chunks").fetchall()
            self._matrix = VectorMatrix.from_rows(
                rows, space.dimension, normalize=not space.normalized
            )
            self._matrix_generation = generation
        return self._matrix

    def _current_keywords(self, generation: int) -> KeywordMatrix | None:
        """The in-memory BM25 postings for ``generation``, or None to ask FTS5 directly.

        Loading the postings costs about as much as a few hundred FTS5 queries, so after a
        write the first queries go to FTS5 and the cache is rebuilt only once the same
        generation has been queried a few times (a write-heavy phase never pays for it)."""
        if not self._keyword_cache:
            return None
        if self._keywords is not None and generation == self._keywords_generation:
            return self._keywords
        if generation != self._stale_generation:
            self._stale_generation, self._stale_queries = generation, 0
        self._stale_queries += 1
        if self._stale_queries < self._keyword_cache_after:
            return None
        self._keywords = KeywordMatrix.load(self._db)
        self._keywords_generation = generation
        return self._keywords

    @contextmanager
    def _read_snapshot(self) -> Iterator[int]:
        """A read transaction: everything read inside sees one committed state of the index,
        tagged with its write generation."""
        try:
            self._db.execute("BEGIN")
            row = self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        except sqlite3.Error as error:
            raise StoreError(f"cannot read the index at {self.path}: {error}") from error
        try:
            yield int(row[0]) if row else 0
        except sqlite3.Error as error:
            raise StoreError(f"reading the index failed: {error}") from error
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")


def _condition(where: Filter | None) -> tuple[str, Params]:
    return ("1", []) if where is None else compile_filter(where)


def _dump_json(value: object, source: str) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)
    except (TypeError, ValueError) as error:
        raise StoreError(f"{source}: metadata is not JSON-serializable: {error}") from error


def _plain(value: object) -> object:
    if isinstance(value, MappingProxyType):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


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
        id=row[1],
        document_id=row[2],
        index=row[3],
        text=row[4],
        char_start=row[5],
        char_end=row[6],
        metadata=MappingProxyType(json.loads(row[7])),
    )
