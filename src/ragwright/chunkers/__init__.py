"""Chunkers: split a document into chunks that are exact slices of its content.

Every chunker keeps ``document.content[chunk.char_start:chunk.char_end] == chunk.text`` and drops
nothing but whitespace and a file's metadata header (Markdown front matter, read into the
document's metadata). Every one but ``document`` (the whole document as one chunk) chunks the
sections `tile_sections` gives — never across a section boundary, so each chunk has one
breadcrumb, but a heading with no text of its own goes with its first subsection — and, given
a ``token_counter``, keeps every chunk inside the embedder's token window.
"""

from __future__ import annotations

import inspect
from typing import Any

from ragwright.chunkers._spans import tile_sections
from ragwright.chunkers.context_headers import OPTION as HEADERS_OPTION
from ragwright.chunkers.context_headers import ContextHeaderChunker, ContextHeaders
from ragwright.chunkers.fixed import FixedWindowChunker
from ragwright.chunkers.keyword_bigrams import OPTION as KEYWORDS_OPTION
from ragwright.chunkers.keyword_bigrams import KeywordBigramChunker, Keywords
from ragwright.chunkers.markdown_heading import MarkdownHeadingChunker
from ragwright.chunkers.paragraph import ParagraphChunker
from ragwright.chunkers.recursive import RecursiveChunker
from ragwright.chunkers.sentence import SentenceChunker
from ragwright.chunkers.whole import WholeDocumentChunker
from ragwright.errors import ConfigError
from ragwright.ports import Chunker

__all__ = [
    "CHUNKERS",
    "DEFAULT_CHUNKER",
    "FixedWindowChunker",
    "MarkdownHeadingChunker",
    "ParagraphChunker",
    "RecursiveChunker",
    "SentenceChunker",
    "WholeDocumentChunker",
    "create_chunker",
    "tile_sections",
]

#: Chunker names as configuration spells them.
#: The chunker an index uses unless told otherwise.
DEFAULT_CHUNKER = "recursive"

CHUNKERS: dict[str, type[Chunker]] = {
    "recursive": RecursiveChunker,
    "paragraph": ParagraphChunker,
    "sentence": SentenceChunker,
    "markdown": MarkdownHeadingChunker,
    "fixed": FixedWindowChunker,
    "document": WholeDocumentChunker,
}


def create_chunker(name: str = DEFAULT_CHUNKER, **options: Any) -> Chunker:
    """The chunker registered as ``name``, built with ``options``: its constructor arguments,
    and ``context_headers`` and ``keywords``, which every chunker takes (see
    `chunkers.context_headers`, `chunkers.keyword_bigrams`)."""
    where = ContextHeaders.parse(options.pop(HEADERS_OPTION, ContextHeaders.OFF.value))
    keywords = Keywords.parse(options.pop(KEYWORDS_OPTION, Keywords.WORDS.value))
    chunker = _registered(name, options)
    if where is not ContextHeaders.OFF:
        chunker = ContextHeaderChunker(chunker, where)
    return KeywordBigramChunker(chunker) if keywords is Keywords.CJK_BIGRAMS else chunker


def _registered(name: str, options: dict[str, Any]) -> Chunker:
    chunker_class = CHUNKERS.get(name.strip().lower())
    if chunker_class is None:
        raise ConfigError(f"unknown chunker {name!r}; valid names: {', '.join(CHUNKERS)}")
    accepted = list(inspect.signature(chunker_class).parameters)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(
            f"chunker {name!r} does not take {', '.join(unknown)}; "
            f"its options are: {', '.join([*accepted, HEADERS_OPTION, KEYWORDS_OPTION])}"
        )
    return chunker_class(**options)
