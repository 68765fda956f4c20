"""What every store's writes share: one document is a batch of one, one delete a batch of one,
and a write needs the embedding space bound first."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ragwright.errors import StoreError
from ragwright.models import Chunk, Document, EmbeddingSpace
from ragwright.ports import DocumentWrite, Vectors


class SingleWrites:
    """`upsert` and `delete` in terms of a store's ``write`` and ``delete_many``."""

    if TYPE_CHECKING:

        def write(self, batch: Sequence[DocumentWrite]) -> None: ...

        def delete_many(self, document_ids: Iterable[str]) -> int: ...

    def upsert(
        self,
        document: Document,
        chunks: Sequence[Chunk],
        vectors: Vectors,
        fingerprint: str = "",
    ) -> None:
        """Insert or replace one document with its chunks, atomically."""
        self.write([DocumentWrite(document, chunks, vectors, fingerprint)])

    def delete(self, document_id: str) -> bool:
        """Delete a document and everything derived from it. True when it existed."""
        return self.delete_many([document_id]) == 1


def bound_space(space: EmbeddingSpace | None) -> EmbeddingSpace:
    """The space a write checks its vectors against; none bound is a `StoreError`."""
    if space is None:
        raise StoreError("bind an embedding space (bind_space) before writing")
    return space
