"""Checks every store makes before writing a document, whatever it stores it in.

A NUL character is refused in a document's source, text and metadata (its chunks' included):
PostgreSQL's text and jsonb cannot hold one, and a document one store refuses the other refuses
too (`DocumentRefused`, before any transaction: ingest reports that document and writes the
rest of its batch). No parser keeps a NUL in text; one comes in through metadata, such as a
JSON field holding ``"\u0000"``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ragwright._surrogates import refuse_surrogates
from ragwright.errors import DocumentRefused, StoreError
from ragwright.models import EmbeddingSpace
from ragwright.ports import DocumentWrite, Vectors


def check_write(
    item: DocumentWrite, space: EmbeddingSpace, *, document_checked: bool = False
) -> None:
    """What every store checks before writing a document: its vectors have the space's shape
    and are finite, each chunk is an exact span of this document, and its text is valid
    Unicode (no lone surrogate) without NUL characters, nor its metadata. ``document_checked``:
    the document's own text was checked already (a streamed write checks it once, then each
    batch of chunks)."""
    document, chunks, vectors = item.document, item.chunks, item.vectors
    if not document_checked:
        refuse_surrogates(document.source, "a document's source")
        refuse_surrogates(document.content, f"{document.source!r}: the content")
        _refuse_nul(document.source, "its source", document.source)
        _refuse_nul(document.source, "its text", document.content)
        _refuse_nul(document.source, "its metadata", document.metadata)
        sections = [section.metadata for section in document.sections]
        _refuse_nul(document.source, "the metadata of its sections", sections)
    if vectors.shape != (len(chunks), space.dimension):
        raise StoreError(
            f"{document.source}: {len(chunks)} chunks need vectors of shape "
            f"({len(chunks)}, {space.dimension}), got {vectors.shape}"
        )
    if not np.isfinite(vectors).all():
        raise StoreError(f"{document.source}: vectors contain NaN or infinity")
    for chunk in chunks:
        if chunk.document_id != document.id:
            raise StoreError(f"chunk {chunk.id} belongs to another document")
        if document.content[chunk.char_start : chunk.char_end] != chunk.text:
            raise StoreError(f"chunk {chunk.id} is not an exact span of {document.source}")
        _refuse_nul(document.source, f"the metadata of its chunk {chunk.index}", chunk.metadata)


def _refuse_nul(source: str, where: str, value: object) -> None:
    """`DocumentRefused` when ``value`` (text, or JSON-like metadata: its keys too) holds a
    NUL character."""
    if _holds_nul(value):
        raise DocumentRefused(
            source,
            f"{where} holds a NUL character (U+0000), which no store keeps (PostgreSQL cannot); "
            "remove it from the file",
        )


def _holds_nul(value: object) -> bool:
    # Loops, not any() over generators: this runs for every chunk written (~2 µs each).
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        for key, item in value.items():
            if _holds_nul(key) or _holds_nul(item):
                return True
    elif isinstance(value, list | tuple):
        for item in value:
            if _holds_nul(item):
                return True
    return False


def query_vector(query: Vectors, space: EmbeddingSpace) -> npt.NDArray[np.float32]:
    """``query`` as one float32 vector of the space's dimension; another, or one holding NaN
    or infinity (which would rank rows arbitrarily), is a `StoreError`."""
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    if vector.shape[0] != space.dimension:
        raise StoreError(
            f"query vector has dimension {vector.shape[0]}, the index {space.dimension}"
        )
    if not np.isfinite(vector).all():
        raise StoreError("the query vector contains NaN or infinity")
    return vector
