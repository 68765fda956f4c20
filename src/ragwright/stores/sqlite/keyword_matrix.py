"""FTS5's BM25, scored in numpy from a snapshot of the FTS5 index: a derived, rebuildable cache.

SQLite's ``bm25()`` must score every row that matches any query term; a natural-language query
matches about half of a corpus, so a query costs milliseconds. This cache reads the FTS5 index
once (term → documents with term frequency, and document lengths), precomputes each posting's
BM25 contribution with FTS5's own formula and constants, and answers a query with a few numpy
additions. FTS5 stays the source of truth: the terms come from FTS5's tokenizer, and the scores
equal ``-bm25(chunks_fts)`` (a test holds the two to each other).

FTS5's formula (fts5_aux.c): for each query term with ``n`` matching rows out of ``N``,
``idf = log((N - n + 0.5) / (n + 0.5))`` (floored at 1e-6), and a row with ``tf`` occurrences
and ``dl`` tokens scores ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` with
``k1 = 1.2``, ``b = 0.75``.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75
_MIN_IDF = 1e-6

Floats = npt.NDArray[np.float64]
RowIds = npt.NDArray[np.int64]


@dataclass(frozen=True)
class KeywordMatrix:
    rowids: RowIds  # ascending; position i of a score vector is row id rowids[i]
    terms: dict[str, int]
    indptr: npt.NDArray[np.int64]  # postings of term t: indptr[t] .. indptr[t + 1]
    positions: npt.NDArray[np.int32]
    weights: Floats

    @classmethod
    def load(cls, db: sqlite3.Connection) -> KeywordMatrix:
        """Read the FTS5 index of ``chunks_fts`` (call inside one read transaction)."""
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_instances "
            "USING fts5vocab(main, chunks_fts, instance)"
        )
        sizes = db.execute("SELECT id, sz FROM chunks_fts_docsize ORDER BY id").fetchall()
        rowids = np.fromiter((r[0] for r in sizes), dtype=np.int64, count=len(sizes))
        lengths = np.fromiter((_varint(r[1]) for r in sizes), dtype=np.float64, count=len(sizes))
        postings = db.execute(
            "SELECT term, doc, count(*) FROM temp.chunks_instances GROUP BY term, doc"
        ).fetchall()
        return cls._build(rowids, lengths, postings)

    @classmethod
    def _build(
        cls, rowids: RowIds, lengths: npt.NDArray[np.float64], postings: list[tuple[str, int, int]]
    ) -> KeywordMatrix:
        count = len(rowids)
        docs = np.fromiter((p[1] for p in postings), dtype=np.int64, count=len(postings))
        tf = np.fromiter((p[2] for p in postings), dtype=np.float64, count=len(postings))
        positions = np.searchsorted(rowids, docs).astype(np.int32)
        terms: dict[str, int] = {}
        starts: list[int] = []
        for i, (term, _, _) in enumerate(postings):  # postings come grouped by term
            if term not in terms:
                terms[term] = len(starts)
                starts.append(i)
        indptr = np.array([*starts, len(postings)], dtype=np.int64)
        document_frequency = np.diff(indptr).astype(np.float64)
        idf = np.log((count - document_frequency + 0.5) / (document_frequency + 0.5))
        idf = np.maximum(idf, _MIN_IDF)
        average = float(lengths.sum()) / count if count else 1.0
        norm = K1 * (1 - B + B * lengths[positions] / max(average, 1e-9))
        per_posting_idf = np.repeat(idf, np.diff(indptr))
        weights = per_posting_idf * tf * (K1 + 1) / (tf + norm)
        return cls(rowids, terms, indptr, positions, weights)

    def top_k(
        self, terms: dict[str, int], k: int, allowed: npt.NDArray[np.intp] | None = None
    ) -> list[tuple[int, float]]:
        """(row id, BM25 score) of the k best rows matching any term, best first. ``terms``
        maps each query term to its count in the query."""
        scores = np.zeros(len(self.rowids), dtype=np.float64)
        matched = np.zeros(len(self.rowids), dtype=bool)
        for term, count in terms.items():
            index = self.terms.get(term)
            if index is None:
                continue
            start, end = self.indptr[index], self.indptr[index + 1]
            scores[self.positions[start:end]] += count * self.weights[start:end]
            matched[self.positions[start:end]] = True
        if allowed is not None:
            keep = np.zeros(len(self.rowids), dtype=bool)
            keep[allowed] = True
            matched &= keep
        candidates = np.flatnonzero(matched)
        if candidates.size == 0 or k <= 0:
            return []
        best = best_positions(scores[candidates], self.rowids[candidates], k)
        return [(int(self.rowids[candidates[i]]), float(scores[candidates[i]])) for i in best]

    def positions_of(self, rowids: RowIds) -> npt.NDArray[np.intp]:
        if len(self.rowids) == 0 or rowids.size == 0:
            return np.empty(0, dtype=np.intp)
        found = np.searchsorted(self.rowids, rowids)
        found = found[found < len(self.rowids)]
        return found[np.isin(self.rowids[found], rowids)]


def best_positions(
    scores: npt.NDArray[np.floating[Any]], rowids: RowIds, k: int
) -> npt.NDArray[np.intp]:
    """Indices of the k best scores, best first, ties broken by ascending row id, exactly as
    ``ORDER BY score DESC, rowid LIMIT k`` would (rows tied at the cut-off are all considered
    before cutting, so the choice among them is not left to argpartition)."""
    if k < scores.size:
        cutoff = np.partition(scores, scores.size - k)[scores.size - k]
        kept = np.flatnonzero(scores >= cutoff)
    else:
        kept = np.arange(scores.size)
    order = np.lexsort((rowids[kept], -scores[kept]))
    return kept[order][:k]


def _varint(blob: bytes) -> int:
    """The first SQLite varint of an FTS5 docsize record: the row's token count."""
    value = 0
    for i, byte in enumerate(blob[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


def idf(rows: int, hits: int) -> float:
    """FTS5's idf, for tests and explanations."""
    return max(math.log((rows - hits + 0.5) / (hits + 0.5)), _MIN_IDF)
