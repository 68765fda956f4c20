"""What every store checks before re-keying a document for a move (`ports.DocumentMove`).

A move keeps the stored vectors and keyword entries, so it is refused unless the moved document
and its chunks are exactly what is stored under new keys: the same content, and chunk for chunk
the same index, span, text and keyword-indexed text (a table header in the metadata is indexed
with the text). Anything else would leave vectors or postings that do not belong to the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragwright.errors import StoreError
from ragwright.models import TABLE_HEADER, Chunk, Document


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """What a store reads of a stored chunk to check a move against it."""

    index: int
    text: str
    char_start: int
    char_end: int
    #: The chunk's stored (merged) metadata.
    metadata: dict[str, Any]


def check_move(
    moved: Document,
    chunks: Sequence[Chunk],
    stored_source: str,
    stored_content: str,
    stored: Sequence[StoredChunk],
) -> None:
    """Raise `StoreError` unless ``moved`` with ``chunks`` is the stored document re-keyed."""
    where = f"moving {stored_source} to {moved.source}"
    if moved.source == stored_source:
        raise StoreError(f"{where}: a move changes the source")
    if moved.content != stored_content:
        raise StoreError(f"{where}: the content differs from the stored content")
    ordered = sorted(stored, key=lambda c: c.index)
    if len(chunks) != len(ordered):
        raise StoreError(f"{where}: {len(chunks)} chunks given, {len(ordered)} stored")
    for chunk, old in zip(chunks, ordered, strict=True):
        if chunk.document_id != moved.id:
            raise StoreError(f"{where}: chunk {chunk.id} belongs to another document")
        new_header = {**moved.metadata, **chunk.metadata}.get(TABLE_HEADER)
        same = (chunk.index, chunk.text, chunk.char_start, chunk.char_end) == (
            old.index,
            old.text,
            old.char_start,
            old.char_end,
        )
        if not same or new_header != old.metadata.get(TABLE_HEADER):
            raise StoreError(f"{where}: chunk {chunk.index} is not the stored chunk")
