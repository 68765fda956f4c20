"""Parent sections: search small chunks, hand on the section that holds them.

Small chunks rank precisely; a reader (or an LLM) wants the whole section around the match.
Each hit becomes the section of its document that holds its chunk (the sections chunkers read,
by heading: `ragwright.chunkers.tile_sections`), as ONE exact span (``document.content[char_start:
char_end] == text``, surrounding whitespace trimmed), and hits of one section merge into one
hit at the position of the best of them, listing the chunks that selected it.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from ragwright.chunkers import tile_sections
from ragwright.models import Chunk, Document, Hit, Section, chunk_id_for
from ragwright.ports import DocumentLookup
from ragwright.processors._args import integer

#: Chunk metadata of a section hit: the chunk ids of the hits it stands for, best first.
SECTION_HITS = "section_hits"


class ParentSection:
    """Replaces each hit by its enclosing section, merging hits of one section. A hit whose
    document or section cannot be found, or whose section is longer than ``max_chars``, is
    kept as it is (a whole long chapter would drown the match)."""

    name: str = "parent_section"
    last: bool = False

    def __init__(self, documents: DocumentLookup, max_chars: int = 6000) -> None:
        self.documents = documents
        self.max_chars = integer("parent_section", "max_chars", max_chars, minimum=1)

    def process(self, query: str, hits: list[Hit]) -> list[Hit]:
        documents: dict[str, Document | None] = {}
        merged: dict[tuple[str, int, int], list[Hit]] = {}
        order: list[tuple[str, int, int] | Hit] = []
        for hit in hits:
            chunk = hit.chunk
            if chunk.document_id not in documents:
                documents[chunk.document_id] = self.documents.get_document(chunk.document_id)
            span = self._section(documents[chunk.document_id], chunk)
            if span is None:
                order.append(hit)
                continue
            key = (chunk.document_id, *span)
            if key not in merged:
                merged[key] = []
                order.append(key)
            merged[key].append(hit)
        return [
            item if isinstance(item, Hit) else _section_hit(documents, item, merged[item])
            for item in order
        ]

    def _section(self, document: Document | None, chunk: Chunk) -> tuple[int, int] | None:
        if document is None:
            return None
        section = _enclosing(tile_sections(document), chunk)
        if section is None:
            return None
        content = document.content
        start, end = section.char_start, section.char_end
        start += len(content[start:end]) - len(content[start:end].lstrip())
        end -= len(content[start:end]) - len(content[start:end].rstrip())
        if end - start > self.max_chars or end <= start:
            return None
        return start, end

    def __repr__(self) -> str:
        return f"ParentSection(max_chars={self.max_chars})"


def _enclosing(sections: list[Section], chunk: Chunk) -> Section | None:
    """The section holding the whole chunk."""
    holding = [
        s for s in sections if s.char_start <= chunk.char_start and chunk.char_end <= s.char_end
    ]
    return min(holding, key=lambda s: s.char_end - s.char_start, default=None)


def _section_hit(
    documents: dict[str, Document | None], key: tuple[str, int, int], hits: list[Hit]
) -> Hit:
    document_id, start, end = key
    document = documents[document_id]
    assert document is not None
    best = hits[0]
    text = document.content[start:end]
    chunk = Chunk(
        id=chunk_id_for(document_id, start, text),
        document_id=document_id,
        index=min(hit.chunk.index for hit in hits),
        text=text,
        char_start=start,
        char_end=end,
        metadata=MappingProxyType(
            {**best.chunk.metadata, SECTION_HITS: tuple(hit.chunk.id for hit in hits)}
        ),
    )
    arms = frozenset().union(*(hit.arms for hit in hits))
    return dataclasses.replace(best, chunk=chunk, arms=arms)
