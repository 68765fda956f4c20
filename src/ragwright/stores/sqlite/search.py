"""Search: exact cosine top-k in numpy over a cached vector matrix, and BM25 from FTS5 (or
its in-memory cache, `KeywordMatrix`), both with filters applied inside SQLite first."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from ragwright.errors import StoreError
from ragwright.filters import Filter
from ragwright.models import Arm, EmbeddingSpace, Hit, Scale
from ragwright.ports import Vectors
from ragwright.stores.fts_query import match_expression, query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite.documents import condition_for
from ragwright.stores.sqlite.filters import compile_filter
from ragwright.stores.sqlite.keyword_matrix import KeywordMatrix
from ragwright.stores.sqlite.rows import CHUNK_COLUMNS, chunk_from_row
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.sqlite.vector_matrix import VectorMatrix


class SQLiteSearch(SQLiteSettings):
    """Both retrieval arms. The caches are rebuilt when the write generation shows that any
    process wrote; ranking, filtering and reading rows happen in one read snapshot."""

    _matrix: VectorMatrix | None
    _matrix_generation: int
    _keyword_cache: bool
    _keyword_cache_after: int
    _keywords: KeywordMatrix | None
    _keywords_generation: int
    _stale_generation: int
    _stale_queries: int
    _tokenizer: FTS5Terms
    _stop_words: frozenset[str]

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
        with self._db.lock, self._db.read_snapshot() as generation:
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
        with self._db.lock, self._db.read_snapshot() as generation:
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
        condition, params = condition_for(where)
        rows = self._db.query(
            "SELECT f.rowid, -bm25(chunks_fts) AS score FROM chunks_fts f "
            "JOIN chunks c ON c.rowid = f.rowid "
            f"WHERE chunks_fts MATCH ? AND {condition} ORDER BY score DESC, f.rowid LIMIT ?",
            [match_expression(words), *params, top_k],
        )
        return [(r[0], float(r[1])) for r in rows]

    def _matching_rowids(self, where: Filter) -> npt.NDArray[np.int64]:
        condition, params = compile_filter(where)
        rows = self._db.query(f"SELECT c.rowid FROM chunks c WHERE {condition}", params)
        return np.array([r[0] for r in rows], dtype=np.int64)

    def _hits(self, scored: list[tuple[int, float]], scale: Scale, arm: Arm) -> list[Hit]:
        if not scored:
            return []
        marks = ", ".join("?" for _ in scored)
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.rowid IN ({marks})",
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
                    chunk=chunk_from_row(row),
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
            rows = self._db.connection.execute("SELECT rowid, vector FROM chunks").fetchall()
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
        self._keywords = KeywordMatrix.load(self._db.connection)
        self._keywords_generation = generation
        return self._keywords
