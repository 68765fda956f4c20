"""Which question words each chunk holds, as postings: the passage-first step's derived cache.

The passage-first step asks which of a question's content words (`terms.content_words`, crude
five-letter stems) each of a hybrid search's candidates holds, in its `terms.passage_text`.
Reading each candidate's text and metadata and matching the words in them was a quarter of a
SciFact hybrid call (33 candidates: 0.2 ms of rows, 0.19 ms of `held_by_each`). This cache keeps
every chunk's stems as `KeywordMatrix` postings (each stem's slots, in slot order, with a term
frequency of 1), so the question is a few sorted lookups per stem, and no candidate's row is
read before the top_k is cut. Like the BM25 postings it is rebuilt from the database whenever
it cannot be trusted, and caught up by the rows added since (`cache_kinds.words_kind`).
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence

import numpy as np

from ragwright.stores.rows import chunk_from_row
from ragwright.stores.sqlite.keyword_matrix import KeywordMatrix, Postings, TermTable
from ragwright.stores.sqlite.row_slots import RowIds, RowSlots
from ragwright.stores.sqlite.vector_matrix import json_ids
from ragwright.terms import content_words, passage_text

#: What the postings hold; another value in a file's signature means another stemming.
STEMS = "content_words/passage_text v1"
_COLUMNS = "id, document_id, idx, text, char_start, char_end, metadata, rowid"
_ROWS_PER_BATCH = 2000


def load(db: sqlite3.Connection, rowids: RowIds | None = None) -> KeywordMatrix:
    """Every chunk's stems (just those of ``rowids`` when given), in one read transaction."""
    if rowids is None:
        cursor = db.execute(f"SELECT {_COLUMNS} FROM chunks ORDER BY rowid")
    else:
        cursor = db.execute(
            f"SELECT {_COLUMNS} FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) "
            "ORDER BY rowid",
            (json_ids(rowids),),
        )
    vocabulary: dict[str, int] = {}
    row_ids, lengths, term_ids, slots = array("q"), array("i"), array("i"), array("i")
    while batch := cursor.fetchmany(_ROWS_PER_BATCH):
        for row in batch:
            stems = content_words(passage_text(chunk_from_row(row)))
            slot = len(row_ids)
            row_ids.append(row[7])
            lengths.append(len(stems))
            term_ids.extend([vocabulary.setdefault(stem, len(vocabulary)) for stem in stems])
            slots.extend([slot] * len(stems))
    return _matrix(
        np.array(row_ids, dtype=np.int64),
        np.array(lengths, dtype=np.int32),
        list(vocabulary),
        np.frombuffer(term_ids, dtype=np.int32) if term_ids else np.empty(0, dtype=np.int32),
        np.frombuffer(slots, dtype=np.int32) if slots else np.empty(0, dtype=np.int32),
    )


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


def held(words: KeywordMatrix, question: set[str], rowids: Sequence[int]) -> dict[int, set[str]]:
    """The question words each of these rows holds (a row the cache lacks holds none)."""
    found: dict[int, set[str]] = {rowid: set() for rowid in rowids}
    slots = words.rows.slots_of(np.asarray(rowids, dtype=np.int64))
    owners = words.rows.rowids[slots].tolist()
    for stem in question:
        for position in words.holding(stem.encode(), slots):
            found[owners[position]].add(stem)
    return found
