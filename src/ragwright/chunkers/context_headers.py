"""Contextual chunk headers: the context a chunk's own text lacks, indexed or embedded with it.

A chunk cut from the middle of a document no longer says what the document is about: the
second half of an abstract names neither its paper's title nor its section. This chunker
decorator gives each chunk a header made of its document's title (``title`` metadata) and
its heading breadcrumb, leaving out every part the chunk's text already contains (the first
chunk, which starts with the title, gets none). The header is chunk metadata
(`KEYWORD_HEADER`, `EMBEDDING_HEADER`), so ``chunk.text`` stays the exact span citations
point at; `Chunk.keyword_text` and `Chunk.embedded_text` put it in front.

``context_headers`` (a chunking option of every chunker) says where the header goes:
``off`` (nowhere), ``keywords`` (BM25's text only: no re-embedding), ``embedding`` (the
embedded text only) or ``both``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from enum import StrEnum

from ragwright.chunkers.keyword_bigrams import KeywordBigramChunker, with_bigrams
from ragwright.errors import ConfigError
from ragwright.models import (
    BREADCRUMB_SEPARATOR,
    EMBEDDING_HEADER,
    KEYWORD_HEADER,
    Chunk,
    Document,
)
from ragwright.ports import Chunker, ChunkStream

#: The chunking option that turns headers on (see `create_chunker`).
OPTION = "context_headers"


class ContextHeaders(StrEnum):
    """Where a chunk's context header goes."""

    OFF = "off"
    KEYWORDS = "keywords"
    EMBEDDING = "embedding"
    BOTH = "both"

    @classmethod
    def parse(cls, value: object) -> ContextHeaders:
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                pass
        valid = ", ".join(member.value for member in cls)
        raise ConfigError(f"{OPTION} must be one of {valid}; got {value!r}")

    @property
    def keys(self) -> tuple[str, ...]:
        """The chunk metadata keys the header is written under."""
        return {
            ContextHeaders.OFF: (),
            ContextHeaders.KEYWORDS: (KEYWORD_HEADER,),
            ContextHeaders.EMBEDDING: (EMBEDDING_HEADER,),
            ContextHeaders.BOTH: (KEYWORD_HEADER, EMBEDDING_HEADER),
        }[self]


def context_header(document: Document, chunk: Chunk) -> str:
    """The title and headings above ``chunk`` that its text does not contain, joined as a
    breadcrumb ("" when it contains them all). Compared as whole words, case-insensitively,
    whitespace collapsed: a title the chunk repeats in other case or line breaks is not repeated."""
    title = document.metadata.get("title")
    path = chunk.metadata.get("heading_path")
    parts = [title] if isinstance(title, str) else []
    parts += [str(heading) for heading in path] if isinstance(path, list) else []
    said = _folded(chunk.text)
    kept: list[str] = []
    for part in parts:
        folded = _folded(part)
        if folded and not _says(said, folded) and folded not in map(_folded, kept):
            kept.append(part.strip())
    return BREADCRUMB_SEPARATOR.join(kept)


def _says(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` as whole words ("install" is not in "installer")."""
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


class ContextHeaderChunker:
    """``inner``'s chunks, each with its context header under the keys ``where`` names."""

    def __init__(self, inner: Chunker, where: ContextHeaders) -> None:
        self.inner = inner
        self.where = where

    def chunk(self, document: Document) -> list[Chunk]:
        return [self._headed(document, chunk) for chunk in self.inner.chunk(document)]

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        """One at a time when ``inner`` streams (see `ChunkStream`), else from its list."""
        chunks = (
            self.inner.iter_chunks(document)
            if isinstance(self.inner, ChunkStream)
            else iter(self.inner.chunk(document))
        )
        for chunk in chunks:
            yield self._headed(document, chunk)

    def _headed(self, document: Document, chunk: Chunk) -> Chunk:
        header = context_header(document, chunk)
        if not header:
            return chunk
        return replace(chunk, metadata={**chunk.metadata, **dict.fromkeys(self.where.keys, header)})


def headed(chunker: Chunker, document: Document, chunks: list[Chunk]) -> list[Chunk]:
    """``chunks``, made by something other than ``chunker`` (a document chunker, which parses
    and chunks in one pass), with the context headers ``chunker`` gives its own (none unless
    it is a `ContextHeaderChunker`), and the CJK bigrams of a `KeywordBigramChunker`: the
    configured chunking's keyword text reaches every chunk."""
    if isinstance(chunker, KeywordBigramChunker):
        return [with_bigrams(chunk) for chunk in headed(chunker.inner, document, chunks)]
    if not isinstance(chunker, ContextHeaderChunker):
        return chunks
    return [chunker._headed(document, chunk) for chunk in chunks]
