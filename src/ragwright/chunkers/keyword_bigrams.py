"""CJK bigrams in a chunk's keyword text: BM25 for Chinese, Japanese and Korean.

``keywords = "cjk-bigrams"`` (a chunking option of every chunker, so recorded per collection)
adds the overlapping bigrams of the chunk's CJK runs (`ragwright.cjk`) to its keyword header
(`KEYWORD_HEADER`, after any context header). Both stores index that header with the text, so
neither tokenizer nor schema changes, and ``chunk.text`` stays the exact cited span. Queries
always add their CJK bigrams (`ragwright.stores.fts_query.query_terms`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from enum import StrEnum

from ragwright.cjk import cjk_bigrams
from ragwright.errors import ConfigError
from ragwright.models import KEYWORD_HEADER, Chunk, Document
from ragwright.ports import Chunker, ChunkStream

#: The chunking option's name.
OPTION = "keywords"


class Keywords(StrEnum):
    """What BM25 indexes besides the words ``unicode61`` reads."""

    WORDS = "words"
    CJK_BIGRAMS = "cjk-bigrams"

    @classmethod
    def parse(cls, value: object) -> Keywords:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            known = ", ".join(member.value for member in cls)
            raise ConfigError(f"keywords must be one of {known}, not {value!r}") from None


class KeywordBigramChunker:
    """``inner``'s chunks, each with its CJK bigrams in its keyword header."""

    def __init__(self, inner: Chunker) -> None:
        self.inner = inner

    def chunk(self, document: Document) -> list[Chunk]:
        return [with_bigrams(chunk) for chunk in self.inner.chunk(document)]

    def iter_chunks(self, document: Document) -> Iterator[Chunk]:
        chunks = (
            self.inner.iter_chunks(document)
            if isinstance(self.inner, ChunkStream)
            else iter(self.inner.chunk(document))
        )
        for chunk in chunks:
            yield with_bigrams(chunk)


def with_bigrams(chunk: Chunk) -> Chunk:
    grams = cjk_bigrams(chunk.indexed_text)
    if not grams:
        return chunk
    header = chunk.metadata.get(KEYWORD_HEADER)
    keywords = " ".join(grams) if not header else f"{header}\n{' '.join(grams)}"
    return replace(chunk, metadata={**chunk.metadata, KEYWORD_HEADER: keywords})
