"""One chunk per paragraph (blank-line separated)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ragwright.chunkers._spans import (
    Boundaries,
    Span,
    SpanSplitter,
    check_size,
    describe,
    iter_assembled,
    trim,
)
from ragwright.errors import ConfigError
from ragwright.models import Chunk, Document, Section
from ragwright.ports import TokenCounter

_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")


class ParagraphChunker:
    """Makes each paragraph a chunk; a paragraph over ``max_size`` (or the token window) is
    split with the recursive rules.

    ``min_size`` (default 0: off) merges consecutive short paragraphs of a section until the
    merged chunk reaches ``min_size`` characters, never beyond ``max_size``; a short last one
    joins the chunk before it. Useful for text
    with many one-line paragraphs, which make poor retrieval units on their own.
    """

    def __init__(
        self,
        max_size: int = 2000,
        min_size: int = 0,
        token_counter: TokenCounter | None = None,
    ) -> None:
        self.max_size = check_size("max_size", max_size)
        self.min_size = check_size("min_size", min_size, minimum=0)
        if self.min_size > self.max_size:
            raise ConfigError(f"min_size ({min_size}) must not exceed max_size ({max_size})")
        self.token_counter = token_counter
        self._splitter = SpanSplitter(self.max_size, counter=token_counter)

    def __repr__(self) -> str:
        return describe(self, "max_size", "min_size", "token_counter")

    def chunk(self, document: Document) -> list[Chunk]:
        return list(self.iter_chunks(document))

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        return iter_assembled(document, self._split)

    def _split(self, text: str, section: Section, bounds: Boundaries) -> list[Span]:
        spans: list[Span] = []
        for start, end in self._groups(_paragraphs(text, section.char_start, section.char_end)):
            spans.extend(self._splitter.split(bounds, start, end))  # as is, when it fits
        return spans

    def _groups(self, paragraphs: Iterator[Span]) -> list[Span]:
        """Paragraphs, with runs of short ones merged up to ``min_size``; a short last run
        joins the group before it when that fits."""
        groups: list[Span] = []
        for start, end in paragraphs:
            if groups and self._short(groups[-1]) and end - groups[-1][0] <= self.max_size:
                groups[-1] = (groups[-1][0], end)
            else:
                groups.append((start, end))
        if (
            len(groups) > 1
            and self._short(groups[-1])
            and groups[-1][1] - groups[-2][0] <= self.max_size
        ):
            groups[-2:] = [(groups[-2][0], groups[-1][1])]
        return groups

    def _short(self, span: Span) -> bool:
        return span[1] - span[0] < self.min_size


def _paragraphs(text: str, start: int, end: int) -> Iterator[Span]:
    """Trimmed paragraph spans of ``text[start:end]``."""
    position = start
    for separator in _BLANK_LINES.finditer(text, start, end):
        if (span := trim(text, position, separator.start())) is not None:
            yield span
        position = separator.end()
    if (span := trim(text, position, end)) is not None:
        yield span
