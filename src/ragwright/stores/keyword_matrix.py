"""FTS5's BM25, scored in numpy from compact postings: a derived, rebuildable cache, shared by
the stores that serve keyword search from memory (the SQLite store reads it from FTS5,
`sqlite.fts5_postings`; the PostgreSQL store from its postings table, `postgres.keyword_cache`).

SQLite's ``bm25()`` must score every row that matches any query term; a natural-language query
matches about half of a corpus, so a query costs milliseconds (PostgreSQL's SQL over its
postings, likewise). This cache holds the index as postings: for each term, the slots
(`row_slots`) of the rows it occurs in and how often (CSR arrays, no Python object per
posting), each row's length in tokens, and answers a query with a few numpy operations. The
database stays the source of truth: the terms come from FTS5's tokenizer, and the scores equal
``-bm25(chunks_fts)`` (a test holds the two to each other).

Term frequencies are kept rather than BM25 weights, because every write changes the row count,
the document frequencies and the average length each weight depends on: so rows added later
are one more segment of postings, removed rows are masked, and nothing already built changes.

FTS5's formula (fts5_aux.c): for each query term with ``n`` matching rows out of ``N``,
``idf = log((N - n + 0.5) / (n + 0.5))`` (floored at 1e-6), and a row with ``tf`` occurrences
and ``dl`` tokens scores ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` with
``k1 = 1.2``, ``b = 0.75``. A search may name another ``k1`` and ``b`` (`BM25Parameters`): the
same postings score them, since term frequencies and lengths are what is kept.

A caller bound to principals scores against its own `Corpus`: ``N``, ``n`` and ``avgdl`` counted
over the rows it may read only, so its scores are those of an index holding only those rows
(a word in a row it may not read changes none of them). Its terms' scores are remembered in
its corpus, apart from the unrestricted caller's, which are kept as they are.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.models import FTS5_BM25, BM25Parameters
from ragwright.stores.row_slots import RowIds, RowSlots, Slots
from ragwright.stores.top_k import best_positions, ranked_pairs

_MIN_IDF = 1e-6
#: Postings whose term weights a cache remembers (8 bytes each, besides their slots).
_POSTINGS_REMEMBERED = 4_000_000
#: Terms whose postings `holding` remembers (views of the arrays: no copy).
_HOLDERS_REMEMBERED = 10_000
#: BM25 parameter pairs whose length normalizations a cache remembers (8 bytes a row each).
_NORMS_REMEMBERED = 4

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TermTable:
    """Sorted terms as one UTF-8 blob and offsets (memory-mappable; looked up by bisection,
    so opening a cache builds no dictionary of a million strings)."""

    blob: npt.NDArray[np.uint8]
    offsets: Ints  # term i is blob[offsets[i]:offsets[i + 1]]

    @classmethod
    def of(cls, terms: Sequence[bytes]) -> TermTable:
        lengths = np.fromiter((len(t) for t in terms), dtype=np.int64, count=len(terms))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(np.frombuffer(b"".join(terms), dtype=np.uint8), offsets)

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def __getitem__(self, index: int) -> bytes:
        return self.blob[self.offsets[index] : self.offsets[index + 1]].tobytes()

    def index(self, term: bytes) -> int | None:
        found = bisect.bisect_left(self, term)
        return found if found < len(self) and self[found] == term else None

    def all(self) -> list[bytes]:
        return [self[i] for i in range(len(self))]


@dataclass(frozen=True)
class Postings:
    """One segment: the rows of term i are ``slots[indptr[i]:indptr[i + 1]]``."""

    terms: TermTable
    indptr: Ints
    slots: npt.NDArray[np.int32]
    tf: npt.NDArray[np.int32]

    def of(self, term: bytes) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] | None:
        index = self.terms.index(term)
        if index is None:
            return None
        start, end = int(self.indptr[index]), int(self.indptr[index + 1])
        return self.slots[start:end], self.tf[start:end]

    @property
    def size(self) -> int:
        return int(self.slots.shape[0])

    @classmethod
    def gathered(
        cls,
        terms: list[bytes],
        term_id: npt.NDArray[np.int32],
        slots: npt.NDArray[np.int32],
        tf: npt.NDArray[np.int32],
    ) -> Postings:
        """A segment of (term, slot, tf) postings grouped by term, each term's in slot order
        (``term_id`` indexes ``terms``), with the terms in memcmp order as `TermTable` looks
        them up: sorted here when they are not."""
        if any(a > b for a, b in itertools.pairwise(terms)):  # not in memcmp order
            order = sorted(range(len(terms)), key=terms.__getitem__)
            rank = np.empty(len(terms), dtype=np.int32)
            rank[np.array(order, dtype=np.int64)] = np.arange(len(terms), dtype=np.int32)
            terms = [terms[i] for i in order]
            term_id = rank[term_id]
            by_term = np.lexsort((slots, term_id))
            term_id, slots, tf = term_id[by_term], slots[by_term], tf[by_term]
        indptr = np.searchsorted(term_id, np.arange(len(terms) + 1)).astype(np.int64)
        return cls(TermTable.of(terms), indptr, slots, tf)


@dataclass
class _Remembered:
    """The terms one state of the cache has scored (per BM25 parameter pair), and how many
    postings they hold."""

    terms: dict[BM25Parameters, dict[bytes, tuple[npt.NDArray[np.int32], Floats]]] = field(
        default_factory=dict
    )
    postings: int = 0
    #: Each parameter pair's length normalizations (one array of the row count per pair).
    norms: dict[BM25Parameters, Floats] = field(default_factory=dict)
    #: Each term's postings per segment, as `holding` looked them up (a bisection in Python).
    holders: dict[bytes, list[npt.NDArray[np.int32]]] = field(default_factory=dict)


#: Postings whose scores one caller's `Corpus` remembers (a few corpora are kept at once).
_CORPUS_POSTINGS_REMEMBERED = 500_000


@dataclass(frozen=True)
class Corpus:
    """The rows BM25's statistics count for one caller (`KeywordMatrix.corpus`): a mask of
    the live slots it may read, how many there are, and their tokens; and, as the cache does
    for every row, the scored postings of the terms asked once."""

    inside: npt.NDArray[np.bool_]
    count: int
    total_length: int
    _remembered: _Remembered = field(
        default_factory=lambda: _Remembered(), init=False, repr=False, compare=False
    )


@dataclass(frozen=True)
class KeywordMatrix:
    rows: RowSlots
    lengths: npt.NDArray[np.int32]  # slot → tokens
    segments: tuple[Postings, ...]
    total_length: int  # tokens of the live rows
    _remembered: _Remembered = field(
        default_factory=lambda: _Remembered(), init=False, repr=False, compare=False
    )

    def extended(self, removed: RowIds, added: KeywordMatrix) -> KeywordMatrix:
        """This cache with ``removed`` rows masked and the rows of ``added`` (a cache of just
        the new rows) appended as one more segment."""
        first = len(self.rows)
        gone = self.rows.slots_of(removed)
        rows = self.rows.changed(removed, added.rows.rowids)
        shifted = tuple(
            Postings(s.terms, s.indptr, s.slots + np.int32(first), s.tf) for s in added.segments
        )
        total = self.total_length - int(self.lengths[gone].sum()) + added.total_length
        lengths = np.concatenate([self.lengths, added.lengths])
        return KeywordMatrix(rows, lengths, self.segments + shifted, total)

    @property
    def postings(self) -> int:
        return sum(s.size for s in self.segments)

    def corpus(self, slots: Slots) -> Corpus:
        """The `Corpus` of these live slots (`RowSlots.slots_of`: distinct, live)."""
        inside = np.zeros(len(self.rows), dtype=bool)
        inside[slots] = True
        return Corpus(inside, int(slots.size), int(self.lengths[slots].sum()))

    def top_k(
        self,
        terms: dict[str, int],
        k: int,
        allowed: Slots | None = None,
        bm25: BM25Parameters = FTS5_BM25,
        corpus: Corpus | None = None,
    ) -> list[tuple[int, float]]:
        """(row id, BM25 score) of the k best rows matching any term, best first. ``terms``
        maps each query term to its count in the query; ``allowed`` limits the rows (within
        ``corpus``, when given: the rows whose statistics count, else every live row)."""
        size = len(self.rows)
        if self.rows.live_count == 0 or k <= 0 or (corpus is not None and corpus.count == 0):
            return []
        term_slots, term_scores = [], []
        for term, repeat in terms.items():
            if corpus is None:
                slots, scores = self._scored(term.encode(), repeat, bm25)
            else:
                slots, scores = self._scored_within(corpus, term.encode(), repeat, bm25)
            if slots.size:  # else no live row holds it
                term_slots.append(slots)
                term_scores.append(scores)
        if not term_slots:
            return []
        if len(term_slots) == 1:  # one term: its slots are distinct, no sum needed
            candidates, scores = term_slots[0].astype(np.int64), term_scores[0]
        else:
            # One pass summing every term's scores per slot, in term order (as a loop of
            # `+=` would); every matching row scores above 0 (idf is floored above 0).
            summed = np.bincount(
                np.concatenate(term_slots), weights=np.concatenate(term_scores), minlength=size
            ).astype(np.float64, copy=False)
            if allowed is None:  # the best straight from the sums: 0 is a row not matched
                best = best_positions(summed, self.rows.rowids, k, positive=True)
                return ranked_pairs(self.rows.rowids, summed, best)
            candidates = np.flatnonzero(summed > 0)  # ~6x faster than on the floats
            scores = summed[candidates]
        if allowed is not None:
            inside = np.zeros(size, dtype=bool)
            inside[allowed] = True
            keep = inside[candidates]
            candidates, scores = candidates[keep], scores[keep]
        if candidates.size == 0:
            return []
        rowids = self.rows.rowids[candidates]
        return ranked_pairs(rowids, scores, best_positions(scores, rowids, k))

    def _norms(self, bm25: BM25Parameters) -> Floats:
        """Each slot's BM25 length normalization, ``k1 * (1 - b + b * dl / avgdl)``: fixed for
        this state of the index, so computed once per pair rather than per posting and query."""
        norms = self._remembered.norms
        found = norms.get(bm25)
        if found is None:
            if len(norms) >= _NORMS_REMEMBERED:
                norms.clear()
            average = max(self.total_length / max(self.rows.live_count, 1), 1e-9)
            k1, b = bm25.k1, bm25.b
            found = norms[bm25] = np.asarray(
                k1 * (1 - b + b * self.lengths / average), dtype=np.float64
            )
        return found

    def _scored(
        self, term: bytes, repeat: int, bm25: BM25Parameters
    ) -> tuple[npt.NDArray[np.int32], Floats]:
        """A term's live slots and their BM25 scores for a query that holds it ``repeat``
        times, ``tf * (k1 + 1) / (tf + norm) * (repeat * idf)``: fixed for this state of the
        index and parameter pair, and queries repeat their words, so those of a term asked
        once are remembered (up to `_POSTINGS_REMEMBERED` postings over all pairs; a term
        table lookup is a bisection in Python besides)."""
        remembered = self._remembered
        known = remembered.terms.get(bm25)
        found = known.get(term) if known is not None and repeat == 1 else None
        if found is not None:
            return found
        slots, tf = self._find(term)
        if self.rows.dead_count and slots.size:
            alive = self.rows.live[slots]
            slots, tf = slots[alive], tf[alive]
        frequency = tf.astype(np.float64)
        weights = frequency * (bm25.k1 + 1) / (frequency + self._norms(bm25)[slots])
        # slots.size: the matching live rows, FTS5's n
        scores = weights * (repeat * idf(self.rows.live_count, int(slots.size)))
        if repeat == 1:
            if remembered.postings + slots.size > _POSTINGS_REMEMBERED:
                remembered.terms.clear()
                remembered.postings = 0
            remembered.terms.setdefault(bm25, {})[term] = (slots, scores)
            remembered.postings += slots.size
        return slots, scores

    def _scored_within(
        self, corpus: Corpus, term: bytes, repeat: int, bm25: BM25Parameters
    ) -> tuple[npt.NDArray[np.int32], Floats]:
        """`_scored` with ``corpus``'s statistics: its rows holding the term, scored with its
        row count and average length, in the same operations as `_scored` and `_norms` (so
        equal to theirs on an index of those rows alone, to the last bit); remembered in the
        corpus as `_scored` remembers them in the cache."""
        remembered = corpus._remembered
        known = remembered.terms.get(bm25)
        found = known.get(term) if known is not None and repeat == 1 else None
        if found is not None:
            return found
        slots, tf = self._find(term)
        if slots.size:
            held = corpus.inside[slots]
            slots, tf = slots[held], tf[held]
        average = max(corpus.total_length / max(corpus.count, 1), 1e-9)
        k1, b = bm25.k1, bm25.b
        norms = np.asarray(k1 * (1 - b + b * self.lengths[slots] / average), dtype=np.float64)
        frequency = tf.astype(np.float64)
        weights = frequency * (bm25.k1 + 1) / (frequency + norms)
        scores = weights * (repeat * idf(corpus.count, int(slots.size)))
        if repeat == 1:
            if remembered.postings + slots.size > _CORPUS_POSTINGS_REMEMBERED:
                remembered.terms.clear()
                remembered.postings = 0
            remembered.terms.setdefault(bm25, {})[term] = (slots, scores)
            remembered.postings += slots.size
        return slots, scores

    def holding(self, term: bytes, slots: Slots) -> list[int]:
        """The positions in ``slots`` (live slots) of those holding ``term``: a sorted lookup
        of each in each segment's postings of the term (which are in slot order)."""
        holders = self._remembered.holders
        postings = holders.get(term)
        if postings is None:
            if len(holders) >= _HOLDERS_REMEMBERED:
                holders.clear()
            found = (segment.of(term) for segment in self.segments)
            # A compacted cache keeps the terms of removed rows, with no postings left.
            postings = holders[term] = [f[0] for f in found if f is not None and f[0].size]
        if not postings:
            return []
        if len(postings) == 1:  # a compacted cache: one segment
            (of_term,) = postings
            # "clip": past the end is the last posting, below any slot beyond it.
            at = of_term.take(of_term.searchsorted(slots), mode="clip")
            # .nonzero(), not np.flatnonzero: three Python calls fewer.
            positions: list[int] = (at == slots).nonzero()[0].tolist()
            return positions
        held = np.zeros(slots.shape[0], dtype=bool)
        for of_term in postings:
            held |= of_term.take(of_term.searchsorted(slots), mode="clip") == slots
        held_at: list[int] = held.nonzero()[0].tolist()
        return held_at

    def _find(self, term: bytes) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        found = [p for p in (s.of(term) for s in self.segments) if p is not None]
        if len(found) == 1:
            return found[0]
        if not found:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
        return np.concatenate([f[0] for f in found]), np.concatenate([f[1] for f in found])

    def compacted(self) -> KeywordMatrix:
        """One segment over the live rows only (slots renumbered in row id order)."""
        keep = self.rows.sorted_slots
        renumber = np.full(len(self.rows), -1, dtype=np.int64)
        renumber[keep] = np.arange(keep.size)
        terms = sorted({t for s in self.segments for t in s.terms.all()})
        table = TermTable.of(terms)
        term_ids, slots, tfs = [], [], []
        for segment in self.segments:
            mapping = np.array([table.index(t) for t in segment.terms.all()], dtype=np.int64)
            term_ids.append(np.repeat(mapping, np.diff(segment.indptr)))
            slots.append(renumber[segment.slots])
            tfs.append(segment.tf)
        term_id, slot, tf = np.concatenate(term_ids), np.concatenate(slots), np.concatenate(tfs)
        kept = slot >= 0
        term_id, slot, tf = term_id[kept], slot[kept], tf[kept]
        order = np.lexsort((slot, term_id))
        indptr = np.searchsorted(term_id[order], np.arange(len(table) + 1)).astype(np.int64)
        segment = Postings(table, indptr, slot[order].astype(np.int32), tf[order])
        rowids = self.rows.rowids[keep]
        return KeywordMatrix(RowSlots.of(rowids), self.lengths[keep], (segment,), self.total_length)

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays of a one-segment cache, for `derived.write_arrays`."""
        (segment,) = self.segments
        return {
            "rowids": self.rows.rowids,
            "live": self.rows.live,
            "lengths": self.lengths,
            "term_blob": segment.terms.blob,
            "term_offsets": segment.terms.offsets,
            "indptr": segment.indptr,
            "slots": segment.slots,
            "tf": segment.tf,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]]) -> KeywordMatrix:
        # Plain arrays over the mapped file: each slice of a `np.memmap` runs Python code.
        plain = {name: np.asarray(array) for name, array in arrays.items()}
        rows = RowSlots.of(plain["rowids"], plain["live"])
        terms = TermTable(plain["term_blob"], plain["term_offsets"])
        segment = Postings(terms, plain["indptr"], plain["slots"], plain["tf"])
        lengths = plain["lengths"]
        total = int(lengths[rows.sorted_slots].sum())
        return cls(rows, lengths, (segment,), total)


def idf(rows: int, hits: int) -> float:
    """FTS5's idf of a term that ``hits`` of ``rows`` rows hold."""
    return max(math.log((rows - hits + 0.5) / (hits + 0.5)), _MIN_IDF)
