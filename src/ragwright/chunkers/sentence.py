"""Sentences packed into chunks: each chunk ends at a sentence boundary."""

from __future__ import annotations

from collections.abc import Iterator

from ragwright.chunkers._spans import (
    Boundaries,
    Span,
    SpanSplitter,
    check_size,
    describe,
    iter_assembled,
)
from ragwright.models import Chunk, Document, Section
from ragwright.ports import TokenCounter
from ragwright.sentences import sentence_spans


class SentenceChunker:
    """Packs a section's consecutive sentences (see `ragwright.sentences`: a line break ends
    one too) into chunks of at most ``max_size`` characters, so no chunk starts or ends inside
    a sentence. A sentence longer than that alone (or, with a ``token_counter``, a packed
    chunk over the embedder's token window) is cut with the recursive rules. Offsets are
    exact, as for every chunker: a chunk is the slice from its first sentence's start to its
    last sentence's end."""

    def __init__(self, max_size: int = 1000, token_counter: TokenCounter | None = None) -> None:
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
        spans: list[Span] = []
        for start, end in self._packed(text, section):
            spans.extend(self._splitter.split(bounds, start, end))  # as is, when it fits
        return spans

    def _packed(self, text: str, section: Section) -> list[Span]:
        body = text[section.char_start : section.char_end]
        packed: list[Span] = []
        for start, end in sentence_spans(body, section.char_start):
            if packed and end - packed[-1][0] <= self.max_size:
                packed[-1] = (packed[-1][0], end)
            else:
                packed.append((start, end))
        return packed
