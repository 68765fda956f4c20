"""Search: cosine top-k in numpy over the derived vector matrix (exact, or over the candidates
of the derived HNSW graph for a large collection, see `ann_choice`), and BM25 from the derived
postings (`KeywordMatrix`, FTS5 itself while those are built), both with filters applied
inside SQLite first."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright import tracing
from ragwright.errors import MissingDependencyError, StoreError
from ragwright.filters import Filter, readable_part
from ragwright.models import (
    FTS5_BM25,
    Arm,
    BM25Parameters,
    CandidateRankings,
    Chunk,
    EmbeddingSpace,
    Hit,
    Scale,
)
from ragwright.ports import Vectors
from ragwright.stores.checks import query_vector
from ragwright.stores.fts_query import match_expression, query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.keyword_corpora import Corpora
from ragwright.stores.keyword_matrix import KeywordMatrix
from ragwright.stores.row_slots import Slots, distinct
from ragwright.stores.sqlite import derived, fts5_postings
from ragwright.stores.sqlite.ann_choice import ANN_SETTING, AnnChoice, check_mode
from ragwright.stores.sqlite.ann_index import AnnIndex
from ragwright.stores.sqlite.cache_kinds import (
    ANN_SUFFIX,
    CANDIDATES_SUFFIX,
    KEYWORDS_SUFFIX,
    VECTORS_SUFFIX,
    ann_kind,
    candidates_kind,
    keyword_kind,
    vector_kind,
)
from ragwright.stores.sqlite.caches import CacheKind, DerivedCache
from ragwright.stores.sqlite.candidate_rows import CandidateRows
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.documents import condition_for
from ragwright.stores.sqlite.faiss_library import INSTALL, available, installed
from ragwright.stores.sqlite.filters import compile_filter, matching_rowids_query
from ragwright.stores.sqlite.ranked_rows import (
    candidates_of,
    hits_of,
    kept_chunks,
    read_candidates,
    read_chunks,
    read_chunks_at,
)
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.stores.sqlite.vector_matrix import VectorMatrix


class SQLiteSearch:
    """Both retrieval arms over one database and the derived files beside it. The caches
    catch up when the write generation shows that any process wrote; ranking, filtering and
    reading rows happen in one read snapshot. The store builds it and hands it its database,
    settings and tokenizer, so it can be built (and tested) alone."""

    def __init__(
        self,
        db: Database,
        settings: SQLiteSettings,
        cache_key: str,
        *,
        tokenizer: FTS5Terms,
        stop_words: frozenset[str],
        ann_choice: AnnChoice,
        keyword_cache: bool = True,
        background: bool = True,
    ) -> None:
        """``cache_key`` is the index's identity in its derived files (beside ``db.path``);
        ``keyword_cache`` and ``background`` are `SQLiteStore`'s options of those names."""
        self.path = db.path
        self._db = db
        self._settings = settings
        self._cache_key = cache_key
        self._tokenizer = tokenizer
        self._stop_words = stop_words
        self._ann_choice = ann_choice
        self._keyword_cache = keyword_cache
        self._background = background
        self._vectors: DerivedCache[VectorMatrix] | None = None
        self._keywords: DerivedCache[KeywordMatrix] | None = None
        self._ann: DerivedCache[AnnIndex] | None = None
        self._candidates: DerivedCache[CandidateRows] | None = None
        self._builds = threading.Lock()  # held by a cache's background build from the database
        self._ann_available: bool | None = None
        self._last_filter: tuple[int, str, npt.NDArray[np.int64]] | None = None
        self._corpora = Corpora()

    def forget_vectors(self) -> None:
        """The recorded space changed: the vector cache is made again for the new one."""
        self._vectors = None

    def close(self) -> None:
        """The caches read their files in place: a closed store that someone still holds
        should not keep them mapped."""
        self._vectors = self._keywords = self._ann = self._candidates = None

    def vector_search(self, query: Vectors, top_k: int, where: Filter | None = None) -> list[Hit]:
        """Cosine top-k, with the filter applied inside SQLite before ranking: exact, or the
        exact scores of the HNSW graph's candidates (`ann_choice` says when)."""
        return self._vector(query, top_k, where)

    def keyword_search(
        self,
        query: str,
        top_k: int,
        where: Filter | None = None,
        *,
        bm25: BM25Parameters = FTS5_BM25,
    ) -> list[Hit]:
        """BM25 over FTS5, best first; scores are positive (higher is better)."""
        return self._keyword(query, top_k, where, bm25)

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
        """Both arms' candidates from one read snapshot, with the ``question`` words each
        holds: from the candidate rows cache (no row read), or, while that is built, from the
        rows themselves."""
        words = query_terms(text, self._stop_words)
        unit = self._unit_query(query, top_k)
        with self._searching() as generation:
            # The two arms run here, inside one read snapshot: their spans are the store's.
            with tracing.span(tracing.RETRIEVE_BM25, top_k=top_k):
                keyword = (
                    self._keyword_scored(words, top_k, where, generation, bm25) if words else []
                )
            with tracing.span(tracing.RETRIEVE_VECTOR, top_k=top_k):
                vector = (
                    [] if unit is None else self._vector_scored(*unit, top_k, where, generation)
                )
            rowids = list(dict.fromkeys([r for r, _ in keyword] + [r for r, _ in vector]))
            cache = self._current_candidates(generation)
            if cache is None:  # being built in the background: from the rows themselves
                ids, holders = read_candidates(self._db, rowids, set(question))
            else:
                ids, holders = cache.read(rowids, set(question))
        return CandidateRankings(
            candidates_of(keyword, Arm.BM25, ids),
            candidates_of(vector, Arm.VECTOR, ids),
            holders,
            {chunk_id: rowid for rowid, (chunk_id, _) in ids.items()},
        )

    @contextmanager
    def _searching(self) -> Iterator[int]:
        """One search: the lock and a read snapshot (its generation), and afterwards the
        pages it read from large cache files leave this process's resident set."""
        with self._db.lock, self._db.read_snapshot() as generation:
            try:
                yield generation
            finally:
                self._release_pages()

    def _release_pages(self) -> None:
        for cache in self._caches():
            cache.release_pages()

    def _caches(self) -> Iterator[DerivedCache[Any]]:
        for cache in (self._keywords, self._vectors, self._ann, self._candidates):
            if cache is not None:
                yield cache

    def _current_candidates(self, generation: int) -> CandidateRows | None:
        """The candidate rows cache as of ``generation``, or None while it is being built in
        the background."""
        if self._candidates is None:
            self._candidates = DerivedCache(
                self.path,
                candidates_kind(),
                self._cache_key,
                background=self._background,
                builds=self._builds,
            )
        return self._candidates.current(self._db.connection, generation)

    def kept_chunks(
        self, chunk_ids: Sequence[str], keys: Mapping[str, int] | None = None
    ) -> dict[str, tuple[Chunk, str]]:
        return kept_chunks(self._db, chunk_ids, keys)

    def _vector(self, query: Vectors, top_k: int, where: Filter | None) -> list[Hit]:
        unit = self._unit_query(query, top_k)
        if unit is None:
            return []
        # Ranking, filtering and reading the rows happen in one snapshot: a concurrent write
        # can never pair a ranked row id with another chunk or a stale filter result.
        with self._searching() as generation:
            scored = self._vector_scored(*unit, top_k, where, generation)
            return self._hits(scored, Scale.SIMILARITY, Arm.VECTOR)

    def _unit_query(
        self, query: Vectors, top_k: int
    ) -> tuple[EmbeddingSpace, npt.NDArray[np.float32]] | None:
        """The index's space and ``query`` as a unit vector of it; None: nothing to search."""
        space = self._settings.space
        if space is None or top_k <= 0:
            return None
        vector = query_vector(query, space)
        norm = float(np.sqrt(vector.dot(vector)))  # np.linalg.norm's own sum, minus its checks
        return space, vector / norm if norm > 0 else vector

    def _vector_scored(
        self,
        space: EmbeddingSpace,
        vector: npt.NDArray[np.float32],
        top_k: int,
        where: Filter | None,
        generation: int,
    ) -> list[tuple[int, float]]:
        """(row id, similarity) of the best rows, inside the read snapshot ``generation``."""
        # A reindex swap since the query was embedded.
        self._settings.check_space(space, generation)
        matrix = self._current_matrix(space, generation)
        allowed = None if where is None else self._matching_rowids(where, generation)
        slots = None if allowed is None else matrix.rows.slots_of(allowed)
        ann = self._current_ann(space, generation, len(matrix), slots)
        scored = None if ann is None else self._approximate(ann, matrix, vector, top_k, allowed)
        if scored is None:
            return matrix.top_k(vector, top_k, slots, background=self._background)
        return scored

    def _keyword(
        self,
        query: str,
        top_k: int,
        where: Filter | None,
        bm25: BM25Parameters,
    ) -> list[Hit]:
        words = query_terms(query, self._stop_words)
        if top_k <= 0 or not words:
            return []
        if where is None:
            hits = self._keyword_in_two(words, top_k, bm25)
            if hits is not None:
                return hits
        with self._searching() as generation:
            scored = self._keyword_scored(words, top_k, where, generation, bm25)
            return self._hits(scored, Scale.BM25, Arm.BM25)

    def _keyword_in_two(
        self, words: list[str], top_k: int, bm25: BM25Parameters
    ) -> list[Hit] | None:
        """An unfiltered search in two statements instead of a read snapshot's four (BEGIN,
        the generation, the rows, COMMIT: the snapshot was 12% of a public BM25 search of
        SciFact, py-spy): the generation alone, which finds the postings current as of it,
        then the rows with the generation of their own statement beside them. Every write
        bumps the generation, so the two equal means the rows are those of the state ranked.
        None when either differs (a write in between, or postings to catch up): the snapshot
        path answers."""
        with self._db.lock:
            generation = self._db.generation()
            keywords = None if self._keywords is None else self._keywords.at(generation)
            if keywords is None:
                return None
            try:
                terms = self._tokenizer.terms(" ".join(words))
                scored = keywords.top_k(terms, top_k, None, bm25)
                if not scored:
                    return []
                rows = read_chunks_at(self._db, [r for r, _ in scored], generation)
            finally:
                self._release_pages()
        return None if rows is None else hits_of(scored, Scale.BM25, Arm.BM25, rows)

    def _keyword_scored(
        self,
        words: list[str],
        top_k: int,
        where: Filter | None,
        generation: int,
        bm25: BM25Parameters,
    ) -> list[tuple[int, float]]:
        """(row id, BM25) of the best rows for the query's ``words``, inside the read
        snapshot ``generation``."""
        if top_k <= 0:
            return []
        keywords = self._current_keywords(generation)
        # A caller's permissions: the statistics count only the rows it may read.
        readable = readable_part(where)
        if keywords is None and bm25 == FTS5_BM25 and readable is None:
            return self._fts5_search(words, top_k, where)
        terms = self._tokenizer.terms(" ".join(words))
        if keywords is None:
            # FTS5's bm25() knows only its own k1 and b, and counts every row: score the
            # postings of the query's terms, read from FTS5 now (all the rows' lengths, so a
            # slower query), instead.
            keywords = fts5_postings.load(self._db.connection, terms=list(terms))
        corpus = None
        if readable is not None:
            corpus = self._corpora.get(
                (generation, repr(readable)),
                keywords,
                lambda: keywords.rows.slots_of(self._matching_rowids(readable, generation)),
            )
        allowed = None
        if where is not None:
            allowed = keywords.rows.slots_of(self._matching_rowids(where, generation))
        return keywords.top_k(terms, top_k, allowed, bm25, corpus)

    def set_ann(self, mode: str) -> int:
        """Record ``mode`` (`ANN_MODES`) in the index, for every process that opens it, and
        build the graph now when the mode calls for it rather than in the background of the
        first searches; ``off`` deletes the graph's file. Returns how many chunks the graph
        covers (0: exact search only)."""
        choice = AnnChoice(check_mode(mode), self._ann_choice.ef)
        if mode == "on" and not available():
            raise MissingDependencyError("approximate vector search (--ann on)", INSTALL)
        self._settings.set_setting(ANN_SETTING, mode)
        self._ann_choice, self._ann = choice, None
        if mode == "off":
            derived.remove(self.path.with_name(self.path.name + ANN_SUFFIX))
            return 0
        space = self._settings.space
        if space is None:
            return 0
        for _ in range(2):  # the second time round takes what a background build handed over
            with self._db.lock, self._db.read_snapshot() as generation:
                matrix = self._current_matrix(space, generation)
                ann = self._current_ann(space, generation, len(matrix), None)
            if ann is not None or self._ann is None:
                break
            self._ann.wait()
        return 0 if ann is None else ann.rows.live_count

    def rebuild_derived_files(self, suffixes: Sequence[str]) -> list[str]:
        """Delete the derived files of these suffixes and build them again from the database
        now (`repair` does this with damaged ones); the names of those built (the graph only
        where faiss is installed, the vectors only once a space is recorded)."""
        for suffix in suffixes:
            derived.remove(self.path.with_name(self.path.name + suffix))
        self._keywords = self._vectors = self._ann = self._candidates = None
        space, built = self._settings.space, []
        kinds: dict[str, CacheKind[Any] | None] = {
            KEYWORDS_SUFFIX: keyword_kind(self._tokenizer.tokenizer),
            CANDIDATES_SUFFIX: candidates_kind(),
            VECTORS_SUFFIX: None if space is None else vector_kind(space),
            ANN_SUFFIX: None if space is None or not available() else ann_kind(space),
        }
        with self._db.lock, self._db.read_snapshot() as generation:
            for suffix in suffixes:
                kind = kinds.get(suffix)
                if kind is not None:
                    cache = DerivedCache(self.path, kind, self._cache_key, background=False)
                    cache.current(self._db.connection, generation)
                    built.append(cache.path.name)
        return built

    def wait_for_caches(self) -> None:
        """Wait until the caches being built in the background are ready (tests, benchmarks)."""
        for cache in self._caches():
            cache.wait()
        matrix = None if self._vectors is None else self._vectors.latest
        if matrix is not None:
            matrix.scans.wait()  # the 8-bit scans, built after the first search

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

    def _matching_rowids(self, where: Filter, generation: int) -> npt.NDArray[np.int64]:
        """The row ids the filter keeps, ascending; from the indexed metadata alone when the
        filter needs nothing else (the chunks' pages are never read). The last answer is kept
        for its generation: a hybrid search asks once for each arm."""
        key = repr(where)  # not ==: True == 1, but `flag = true` and `flag = 1` differ here
        last = self._last_filter
        if last is not None and last[0] == generation and last[1] == key:
            return last[2]
        direct = matching_rowids_query(where)
        if direct is None:
            condition, params = compile_filter(where)
            sql = f"SELECT c.rowid AS chunk_rowid FROM chunks c WHERE {condition}"
        else:
            sql, params = direct
        # One string of ids parsed in C: a Python tuple per row cost 3-5x as much.
        (text,) = self._db.query(f"SELECT group_concat(chunk_rowid) FROM ({sql})", params)[0]
        rowids = distinct(np.fromstring(text or "", dtype=np.int64, sep=","))
        self._last_filter = (generation, key, rowids)
        return rowids

    def _hits(self, scored: list[tuple[int, float]], scale: Scale, arm: Arm) -> list[Hit]:
        """The hits of ``scored``, whole (call inside its read snapshot)."""
        return hits_of(scored, scale, arm, read_chunks(self._db, [r for r, _ in scored]))

    def _current_matrix(self, space: EmbeddingSpace, generation: int) -> VectorMatrix:
        """The vector matrix as of ``generation`` (call inside a read snapshot tagged with
        it): from its file beside the database, caught up with the writes since."""
        if self._vectors is None:
            kind = vector_kind(space)
            self._vectors = DerivedCache(self.path, kind, self._cache_key, background=False)
        matrix = self._vectors.current(self._db.connection, generation)
        if matrix is None:  # a kind without a fallback is built in the query: never here
            raise StoreError(f"the vector cache of {self.path} could not be built")
        return matrix

    def _approximate(
        self,
        ann: AnnIndex,
        matrix: VectorMatrix,
        vector: npt.NDArray[np.float32],
        top_k: int,
        allowed: npt.NDArray[np.int64] | None,
    ) -> list[tuple[int, float]] | None:
        """The exact scores of the graph's candidates, best first; None when the graph found
        fewer than ``top_k`` of the rows that could be found (exact search answers)."""
        ef = self._ann_choice.ef
        within = None if allowed is None else ann.rows.slots_of(allowed)
        candidates = distinct(ann.candidates(vector, max(ef, top_k), ef, within))
        scored = matrix.top_k(vector, top_k, matrix.rows.slots_of(candidates))
        eligible = len(matrix) if within is None else int(within.size)
        return scored if len(scored) >= min(top_k, eligible) else None

    def _current_ann(
        self, space: EmbeddingSpace, generation: int, rows: int, filtered: Slots | None
    ) -> AnnIndex | None:
        """The HNSW graph as of ``generation`` when this search should use it; None for an
        exact search (a small collection, a selective filter, ``ann = off``, no faiss under
        ``auto``, or the graph still being built in the background)."""
        choice = self._ann_choice
        if not choice.uses_graph(rows, None if filtered is None else int(filtered.size)):
            return None
        if self._ann_available is None:
            self._ann_available = installed() if self._background else available()
        if not self._ann_available:
            return None
        if self._ann is None:
            kind = ann_kind(space)
            # Its file's hashes are checked before faiss reads it in place (a damaged graph
            # could send a search outside its arrays, or make faiss refuse it).
            self._ann = DerivedCache(
                self.path, kind, self._cache_key, background=self._background, builds=self._builds
            )
        return self._ann.current(self._db.connection, generation)

    def _current_keywords(self, generation: int) -> KeywordMatrix | None:
        """The BM25 postings as of ``generation``, or None to ask FTS5 directly (no cache, or
        it is being built in the background: a query never waits for it)."""
        if not self._keyword_cache:
            return None
        if self._keywords is None:
            kind = keyword_kind(self._tokenizer.tokenizer)
            self._keywords = DerivedCache(
                self.path,
                kind,
                self._cache_key,
                background=self._background,
                builds=self._builds,
            )
        return self._keywords.current(self._db.connection, generation)
