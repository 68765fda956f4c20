"""Fixed-size character windows: predictable sizes, structure-blind within a section."""

from __future__ import annotations

from collections.abc import Iterator

from ragwright.chunkers._spans import (
    Boundaries,
    Span,
    SpanSplitter,
    check_overlap,
    check_size,
    describe,
    iter_assembled,
)
from ragwright.models import Chunk, Document, Section
from ragwright.ports import TokenCounter


class FixedWindowChunker:
    """Windows of ``size`` characters, each starting ``overlap`` characters before the last ended.

    A window end that falls inside a word moves back to the whitespace before it, and an
    overlap start inside a word moves forward to the next word; a word longer than the window
    is cut, so every window makes progress. Windows stay within sections.
    """

    def __init__(
        self, size: int = 1000, overlap: int = 200, token_counter: TokenCounter | None = None
    ) -> None:
        self.size = check_size("size", size)
        self.overlap = check_overlap(overlap, self.size)
        self.token_counter = token_counter
        self._splitter = SpanSplitter(self.size, self.overlap, token_counter, windows=True)

    def __repr__(self) -> str:
        return describe(self, "size", "overlap", "token_counter")

    def chunk(self, document: Document) -> list[Chunk]:
        return list(self.iter_chunks(document))

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        return iter_assembled(document, self._split)

    def _split(self, text: str, section: Section, bounds: Boundaries) -> list[Span]:
        return self._splitter.split(bounds, section.char_start, section.char_end)
