"""Text → BM25 terms with SQLite FTS5's own tokenizer, for any store that scores BM25 itself.

The SQLite store indexes chunk text with an FTS5 tokenizer (Porter stemming by default, see
`ragwright.stores.sqlite.schema.FTS_TOKENIZER`). A store that keeps its own postings (the
PostgreSQL store) must produce exactly the terms FTS5 would, or its scores drift from
SQLite's: so instead of re-implementing unicode61 + Porter, the text is run through an
in-memory FTS5 table with the same tokenizer and the terms are read back with ``fts5vocab``.
Python's standard ``sqlite3`` always has FTS5 here; no extension is loaded.

A query's ASCII words skip that round trip (a tenth of a SciFact BM25 search): unicode61 reads
ASCII as runs of letters and digits, lower-cased, and `fts_porter` stems them as FTS5 does.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragwright.errors import StoreError
from ragwright.stores.fts_porter import porter

#: What unicode61 reads as a token in ASCII text (every other ASCII character separates).
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class TermCounts:
    """One text's terms with how often each occurs, and its length in tokens (what FTS5's
    bm25() uses as the document length)."""

    terms: dict[str, int]
    length: int


class FTS5Terms:
    """Terms of texts as an FTS5 table with ``tokenizer`` indexes them. Safe to share between
    threads (one in-memory database behind a lock)."""

    def __init__(self, tokenizer: str) -> None:
        # Imported here: the SQLite store's package imports this module as it loads.
        from ragwright.stores.sqlite.schema import FTS_TOKENIZERS

        if tokenizer not in FTS_TOKENIZERS:  # spliced into DDL, so never free text
            raise ValueError(f"unknown FTS5 tokenizer {tokenizer!r}")
        self.tokenizer = tokenizer
        self._stemmed = tokenizer.startswith("porter ")
        self._db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._db.execute(f"CREATE VIRTUAL TABLE texts USING fts5(text, tokenize='{tokenizer}')")
        self._db.execute("CREATE VIRTUAL TABLE text_terms USING fts5vocab(texts, row)")
        self._db.execute("CREATE VIRTUAL TABLE text_instances USING fts5vocab(texts, instance)")
        self._lock = threading.Lock()

    def terms(self, words: str) -> dict[str, int]:
        """Each term of ``words`` with how often it occurs: two words with one stem count
        twice, as two phrases of an FTS5 query do."""
        # Whitespace always separates tokens, so ASCII pieces are tokenized here and only
        # the others go through FTS5.
        pieces = words.split()
        other = [piece for piece in pieces if not piece.isascii()]
        tokens = _ASCII_TOKEN.findall(" ".join(p for p in pieces if p.isascii()).lower())
        found = Counter(map(porter, tokens) if self._stemmed else tokens)
        if other:
            found.update(self._fts5_terms(" ".join(other)))
        # In fts5vocab's order (code points sort as UTF-8 bytes): scores sum in term order.
        return dict(sorted(found.items()))

    def _fts5_terms(self, words: str) -> dict[str, int]:
        with self._lock:
            self._db.execute("DELETE FROM texts")
            self._db.execute("INSERT INTO texts(text) VALUES (?)", (words,))
            return dict(self._db.execute("SELECT term, cnt FROM text_terms").fetchall())

    def count(self, texts: Sequence[str]) -> list[TermCounts]:
        """The terms and length of each text, in order (one pass through FTS5 for all)."""
        if not texts:
            return []
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.execute("DELETE FROM texts")
                self._db.executemany(
                    "INSERT INTO texts(rowid, text) VALUES (?, ?)", enumerate(texts, start=1)
                )
                rows = self._db.execute(
                    "SELECT doc, term, count(*) FROM text_instances GROUP BY doc, term"
                ).fetchall()
            finally:
                self._db.execute("ROLLBACK")  # nothing is kept between calls
        terms: list[dict[str, int]] = [{} for _ in texts]
        lengths = [0] * len(texts)
        for doc, term, count in rows:
            terms[doc - 1][term] = count
            lengths[doc - 1] += count
        return [TermCounts(t, n) for t, n in zip(terms, lengths, strict=True)]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def settle_tokenizer(recorded: str | None, requested: str | None, holder: str, fresh: str) -> str:
    """The BM25 tokenizer of an index or collection (``holder``): the recorded one, else the
    requested one, else the default. Asking for another than the recorded one is a
    `StoreError` telling to re-index into ``fresh`` (the stored terms are the recorded one's)."""
    from ragwright.stores.sqlite.schema import FTS_TOKENIZER, FTS_TOKENIZERS

    if recorded and requested and requested != recorded:
        raise StoreError(
            f"this {holder}'s BM25 tokenizer is {recorded!r}, not {requested!r}; it is fixed "
            f"when the {holder} is created (re-index into {fresh} to change it)"
        )
    chosen = recorded or requested or FTS_TOKENIZER
    if chosen not in FTS_TOKENIZERS:
        raise StoreError(f"unknown BM25 tokenizer {chosen!r}; choose one of {FTS_TOKENIZERS}")
    return chosen
