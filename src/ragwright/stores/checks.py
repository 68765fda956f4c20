"""Checks every store makes before writing a document, whatever it stores it in."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragwright._surrogates import refuse_surrogates
from ragwright.errors import StoreError
from ragwright.models import EmbeddingSpace
from ragwright.ports import DocumentWrite, Vectors


def check_write(
    item: DocumentWrite, space: EmbeddingSpace, *, document_checked: bool = False
) -> None:
    """What every store checks before writing a document: its vectors have the space's shape
    and are finite, each chunk is an exact span of this document, and its text is valid
    Unicode (no lone surrogate). ``document_checked``: the document's own text was checked
    already (a streamed write checks it once, then each batch of chunks)."""
    document, chunks, vectors = item.document, item.chunks, item.vectors
    if not document_checked:
        refuse_surrogates(document.source, "a document's source")
        refuse_surrogates(document.content, f"{document.source!r}: the content")
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
