"""What a hybrid search needs of its candidates before it cuts them to top_k, without reading
their rows: each chunk's id and its document's, and which question words it holds. A derived
cache beside the index (``index.sqlite3.candidates``).

A SciFact hybrid call ranks ~33 distinct candidates, fuses them (by chunk and document id) and
reorders them by which of the question's content words (`terms.content_words`, crude
five-letter stems) each one's `terms.passage_text` holds. Reading every candidate's row and
metadata for that, and matching the words in its text, was a quarter of the call (0.2 ms of
rows, 0.23 of `held_by_each`); reading the ids alone of 33 rows still cost 0.09 ms, the rows'
pages being 2.4 KB each. This cache keeps per slot (`row_slots`) the two ids, and every chunk's
stems as `KeywordMatrix` postings (each stem's slots, in slot order, a term frequency of 1), so
a candidate is two array lookups and a question word a sorted search per stem. Like the BM25
postings it is rebuilt from the database whenever it cannot be trusted, and caught up by the
rows added since (`cache_kinds.candidates_kind`).
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragwright.stores.keyword_matrix import KeywordMatrix, Postings, TermTable
from ragwright.stores.row_slots import RowIds, RowSlots
from ragwright.stores.rows import chunk_from_row
from ragwright.stores.sqlite.rows import CHUNK_TEXT_COLUMNS
from ragwright.stores.sqlite.vector_matrix import json_ids
from ragwright.terms import content_words, passage_text

#: What the file holds; another value in its signature means another stemming or layout.
STEMS = "ids + content_words/passage_text v1"
_ROWS_PER_BATCH = 2000


def load(db: sqlite3.Connection, rowids: RowIds | None = None) -> CandidateRows:
    """Every chunk's ids and stems (just those of ``rowids`` when given), in one read
    transaction."""
    if rowids is None:
        cursor = db.execute(f"SELECT {CHUNK_TEXT_COLUMNS} FROM chunks ORDER BY rowid")
    else:
        cursor = db.execute(
            f"SELECT {CHUNK_TEXT_COLUMNS} FROM chunks "
            "WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid",
            (json_ids(rowids),),
        )
    vocabulary: dict[str, int] = {}
    row_ids, lengths, term_ids, slots = array("q"), array("i"), array("i"), array("i")
    chunk_ids: list[bytes] = []
    document_ids: list[bytes] = []
    while batch := cursor.fetchmany(_ROWS_PER_BATCH):
        for row in batch:
            stems = content_words(passage_text(chunk_from_row(row)))
            slot = len(row_ids)
            row_ids.append(row[7])
            chunk_ids.append(row[0].encode())
            document_ids.append(row[1].encode())
            lengths.append(len(stems))
            term_ids.extend([vocabulary.setdefault(stem, len(vocabulary)) for stem in stems])
            slots.extend([slot] * len(stems))
    words = _matrix(
        np.array(row_ids, dtype=np.int64),
        np.array(lengths, dtype=np.int32),
        list(vocabulary),
        np.frombuffer(term_ids, dtype=np.int32) if term_ids else np.empty(0, dtype=np.int32),
        np.frombuffer(slots, dtype=np.int32) if slots else np.empty(0, dtype=np.int32),
    )
    return CandidateRows(words, _ids(chunk_ids), _ids(document_ids))


def _ids(ids: list[bytes]) -> npt.NDArray[np.bytes_]:
    """Ids as one fixed-width byte string array (the longest sets the width)."""
    return np.array(ids, dtype=np.bytes_) if ids else np.empty(0, dtype="S1")


def _matrix(
    rowids: RowIds,
    lengths: np.ndarray,
    terms: list[str],
    term_ids: np.ndarray,
    slots: np.ndarray,
) -> KeywordMatrix:
    encoded = [term.encode() for term in terms]
    order = sorted(range(len(encoded)), key=encoded.__getitem__)  # the table's memcmp order
    rank = np.empty(len(encoded), dtype=np.int32)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(encoded), dtype=np.int32)
    term_rank = rank[term_ids]
    # Stable: each term's slots stay in the order they were added, ascending. Four bytes a
    # posting where it can (a million chunks hold some 60 million postings).
    by_term = np.argsort(term_rank, kind="stable")
    counts = np.bincount(term_rank, minlength=len(encoded))
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    table = TermTable.of([encoded[i] for i in order])
    segment = Postings(table, indptr, slots[by_term], np.ones(slots.size, dtype=np.int32))
    return KeywordMatrix(RowSlots.of(rowids), lengths, (segment,), int(lengths.sum()))


@dataclass(frozen=True)
class CandidateRows:
    """Per slot of ``words.rows``: the chunk's id, its document's and (``words``) its stems."""

    words: KeywordMatrix
    chunk_ids: npt.NDArray[np.bytes_]
    document_ids: npt.NDArray[np.bytes_]

    @property
    def rows(self) -> RowSlots:
        return self.words.rows

    def read(
        self, rowids: Sequence[int], question: set[str]
    ) -> tuple[dict[int, tuple[str, str]], dict[str, list[str]]]:
        """Each of these rows' (chunk id, document id) by row id, and the chunk ids of those
        holding each ``question`` word (a row the cache lacks is left out), as
        `read_candidates` reads them from the rows."""
        slots = self.rows.slots_of(np.asarray(rowids, dtype=np.int64))
        owners = self.rows.rowids[slots].tolist()
        chunk_ids = [chunk.decode() for chunk in self.chunk_ids[slots].tolist()]
        documents = [document.decode() for document in self.document_ids[slots].tolist()]
        ids = dict(zip(owners, zip(chunk_ids, documents, strict=True), strict=True))
        holders = {
            stem: [chunk_ids[at] for at in self.words.holding(stem.encode(), slots)]
            for stem in question
        }
        return ids, holders

    def extended(self, removed: RowIds, added: CandidateRows) -> CandidateRows:
        return CandidateRows(
            self.words.extended(removed, added.words),
            np.concatenate([self.chunk_ids, added.chunk_ids]),
            np.concatenate([self.document_ids, added.document_ids]),
        )

    def compacted(self) -> CandidateRows:
        """The live slots only, renumbered in row id order (as `KeywordMatrix.compacted`)."""
        keep = self.rows.sorted_slots
        return CandidateRows(self.words.compacted(), self.chunk_ids[keep], self.document_ids[keep])

    def arrays(self) -> dict[str, npt.NDArray[Any]]:
        return {
            **self.words.arrays(),
            "chunk_ids": self.chunk_ids,
            "document_ids": self.document_ids,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[Any]]) -> CandidateRows:
        words = {k: v for k, v in arrays.items() if k not in ("chunk_ids", "document_ids")}
        return cls(
            KeywordMatrix.from_arrays(words),
            np.asarray(arrays["chunk_ids"]),
            np.asarray(arrays["document_ids"]),
        )
