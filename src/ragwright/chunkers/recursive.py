"""Recursive splitting: as large as allowed, cut at the strongest boundary available."""

from __future__ import annotations

from collections.abc import Iterator

from ragwright.chunkers._spans import (
    Boundaries,
    Span,
    SpanSplitter,
    check_overlap,
    check_size,
    describe,
    heading_end,
    iter_assembled,
)
from ragwright.models import Chunk, Document, Section
from ragwright.ports import TokenCounter


class RecursiveChunker:
    """Packs each section into chunks of at most ``size`` characters.

    Cuts fall at the strongest boundary in the window (paragraph, line, sentence, clause, word;
    inside a word only for a word longer than ``size``), as long as that keeps a quarter of the
    window filled. Each chunk after the first in a section repeats up to ``overlap`` characters
    from the end of the previous one, starting at a word. A heading stays with the text below
    it. With a ``token_counter``, chunks over its window are split further until they fit.
    """

    def __init__(
        self, size: int = 1000, overlap: int = 100, token_counter: TokenCounter | None = None
    ) -> None:
        self.size = check_size("size", size)
        self.overlap = check_overlap(overlap, self.size)
        self.token_counter = token_counter
        self._splitter = SpanSplitter(self.size, self.overlap, token_counter)

    def __repr__(self) -> str:
        return describe(self, "size", "overlap", "token_counter")

    def chunk(self, document: Document) -> list[Chunk]:
        return list(self.iter_chunks(document))

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        return iter_assembled(document, self._split)

    def _split(self, text: str, section: Section, bounds: Boundaries) -> list[Span]:
        keep = heading_end(text, section)
        return self._splitter.split(bounds, section.char_start, section.char_end, keep)
