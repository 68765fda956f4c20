"""The whole document as one chunk: for short records (abstracts, tickets, BEIR corpora).

The one chunker that ignores sections and token windows: the chunk spans the whole content,
and an embedder with a shorter window reads its beginning (as the BEIR baselines do).
"""

from __future__ import annotations

from ragwright.chunkers._spans import describe
from ragwright.models import Chunk, Document, chunk_id_for
from ragwright.ports import TokenCounter


class WholeDocumentChunker:
    """One chunk per document: its content without the whitespace around it (none for a blank
    document). ``token_counter``
    is accepted, as every chunker's is, and unused: the document is never split."""

    def __init__(self, token_counter: TokenCounter | None = None) -> None:
        self.token_counter = token_counter

    def __repr__(self) -> str:
        return describe(self)

    def chunk(self, document: Document) -> list[Chunk]:
        content = document.content
        start, end = len(content) - len(content.lstrip()), len(content.rstrip())
        if start >= end:
            return []
        text = content[start:end]
        return [Chunk(chunk_id_for(document.id, start, text), document.id, 0, text, start, end)]
