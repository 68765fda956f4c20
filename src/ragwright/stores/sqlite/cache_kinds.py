"""The store's derived caches: BM25 postings, the vector matrix, the HNSW graph and hybrid
search's candidate rows (ids and words), and how each is built from the database (all of it,
or just the rows added since the cache was built)."""

from __future__ import annotations

import sqlite3

from ragwright.models import EmbeddingSpace
from ragwright.stores.keyword_matrix import KeywordMatrix
from ragwright.stores.row_slots import RowIds
from ragwright.stores.sqlite import candidate_rows, fts5_postings
from ragwright.stores.sqlite.ann_index import EF_CONSTRUCTION, LINKS, AnnIndex
from ragwright.stores.sqlite.caches import CacheKind
from ragwright.stores.sqlite.candidate_rows import CandidateRows
from ragwright.stores.sqlite.schema import FTS_TEXT, FTS_TOKENIZERS
from ragwright.stores.sqlite.vector_matrix import VectorMatrix, json_ids

KEYWORDS_SUFFIX = ".bm25"
VECTORS_SUFFIX = ".vectors"
ANN_SUFFIX = ".ann"
CANDIDATES_SUFFIX = ".candidates"
CACHE_SUFFIXES = (KEYWORDS_SUFFIX, VECTORS_SUFFIX, ANN_SUFFIX, CANDIDATES_SUFFIX)


def keyword_kind(tokenizer: str) -> CacheKind[KeywordMatrix]:
    if tokenizer not in FTS_TOKENIZERS:  # spliced into DDL, so never free text
        raise ValueError(f"unknown FTS5 tokenizer {tokenizer!r}")

    def delta(db: sqlite3.Connection, added: RowIds) -> KeywordMatrix:
        """The postings of just these rows: their text, as FTS5 indexes it, run through a
        temporary FTS5 table with the same tokenizer (the main index cannot be read by row)."""
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.added_fts "
            f"USING fts5(text, tokenize='{tokenizer}')"
        )
        db.execute("DELETE FROM temp.added_fts")
        try:
            db.execute(
                f"INSERT INTO temp.added_fts(rowid, text) SELECT rowid, {FTS_TEXT} FROM chunks "
                "WHERE rowid IN (SELECT value FROM json_each(?))",
                (json_ids(added),),
            )
            return fts5_postings.load(db, "temp", "added_fts")
        finally:
            db.execute("DELETE FROM temp.added_fts")

    return CacheKind(
        suffix=KEYWORDS_SUFFIX,
        signature={"tokenizer": tokenizer},
        build=fts5_postings.load,
        delta=delta,
        from_arrays=KeywordMatrix.from_arrays,
        has_fallback=True,
    )


def vector_kind(space: EmbeddingSpace) -> CacheKind[VectorMatrix]:
    dimension, normalize = space.dimension, not space.normalized
    return CacheKind(
        suffix=VECTORS_SUFFIX,
        signature={
            "dimension": dimension,
            "normalize": normalize,
            "model": space.model,
            "space": space.fingerprint,  # a reindex swap may keep the model name and dimension
        },
        build=lambda db: VectorMatrix.load(db, dimension, normalize=normalize),
        delta=lambda db, added: VectorMatrix.load(db, dimension, normalize=normalize, rowids=added),
        from_arrays=VectorMatrix.from_arrays,
        has_fallback=False,
    )


def ann_kind(space: EmbeddingSpace) -> CacheKind[AnnIndex]:
    """The HNSW graph: built in the background (exact search answers meanwhile); its file is
    checked and then read in place in the query (`AnnIndex.from_arrays`)."""
    dimension, normalize = space.dimension, not space.normalized

    def delta(db: sqlite3.Connection, added: RowIds) -> AnnIndex:
        return AnnIndex.delta(VectorMatrix.load(db, dimension, normalize=normalize, rowids=added))

    return CacheKind(
        suffix=ANN_SUFFIX,
        signature={
            "dimension": dimension,
            "normalize": normalize,
            "model": space.model,
            "fingerprint": space.fingerprint,  # another space's graph is never trusted
            "links": LINKS,
            "ef_construction": EF_CONSTRUCTION,
            "codes": "sq8",
        },
        build=lambda db: AnnIndex.load(db, dimension, normalize=normalize),
        delta=delta,
        from_arrays=AnnIndex.from_arrays,
        has_fallback=True,
    )


def candidates_kind() -> CacheKind[CandidateRows]:
    """Hybrid search's candidate rows: built in the background (the candidates' rows are read
    meanwhile)."""
    return CacheKind(
        suffix=CANDIDATES_SUFFIX,
        signature={"stems": candidate_rows.STEMS},
        build=candidate_rows.load,
        delta=candidate_rows.load,
        from_arrays=CandidateRows.from_arrays,
        has_fallback=True,
    )
