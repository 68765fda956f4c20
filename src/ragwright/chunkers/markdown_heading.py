"""One chunk per heading section: the unit an author chose."""

from __future__ import annotations

from collections.abc import Iterator

from ragwright.chunkers._spans import (
    Boundaries,
    Span,
    SpanSplitter,
    check_size,
    describe,
    heading_end,
    iter_assembled,
)
from ragwright.models import Chunk, Document, Section
from ragwright.ports import TokenCounter


class MarkdownHeadingChunker:
    """Makes each section (heading line plus body) one chunk.

    A section over ``max_size`` characters is split with the recursive rules, the heading line
    staying in the first piece. Works for any parser that yields heading sections (Markdown,
    HTML); a document without sections is one section.
    """

    def __init__(self, max_size: int = 2000, token_counter: TokenCounter | None = None) -> None:
        self.max_size = check_size("max_size", max_size)
        self.token_counter = token_counter
        self._splitter = SpanSplitter(self.max_size, counter=token_counter)

    def __repr__(self) -> str:
        return describe(self, "max_size", "token_counter")

    def chunk(self, document: Document) -> list[Chunk]:
        return list(self.iter_chunks(document))

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        return iter_assembled(document, self._split)

    def _split(self, text: str, section: Section, bounds: Boundaries) -> list[Span]:
        keep = heading_end(text, section)
        return self._splitter.split(bounds, section.char_start, section.char_end, keep)
