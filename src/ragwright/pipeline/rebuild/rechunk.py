"""Re-chunk without downtime (``reindex --chunker``): build a new chunking (chunks and their
vectors) beside the current one from the stored document text (no parsing, no source read),
check it, swap it in.

The build chunks and embeds the documents whose stored version has no staged chunks yet, a
batch of whole documents per store transaction, so a killed run resumes where it stopped and
a document written meanwhile is chunked again. Before the swap every document must be staged
at its stored version, and a sampled search agreement is measured: chunk ids change with the
chunking, so it compares documents, the overlap of the documents of the top-k chunks found by
the current and the new chunking with a sampled current chunk's text as the query. The swap
is one store transaction (`ChunkingRebuild`); graph facts belong to chunks, so it drops the
old chunks' facts with them and the caller extracts the new chunks' (`Spaces.reindex`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragwright.errors import IngestLimitExceeded
from ragwright.models import Chunk
from ragwright.pipeline.ingest.documents import checked_chunks
from ragwright.pipeline.ingest.overlap import OneWriter
from ragwright.pipeline.rebuild.reindex import QUERY_CHARS, Agreement, checked_batch
from ragwright.pipeline.rebuild.telling import Tally, embed_telling
from ragwright.ports import (
    Chunker,
    ChunkExport,
    Chunking,
    ChunkingRebuild,
    ChunkingSlot,
    ChunkingStatus,
    DocumentWrite,
    Embedder,
    Slot,
    StoredText,
    VectorSearch,
)

#: Documents read per page of the build (their chunks are embedded ``batch`` at a time).
DOCUMENTS_PER_PAGE = 64


@dataclass(frozen=True, slots=True)
class RechunkReport:
    documents: int  # documents of the index; every one is staged before a swap
    chunked: int  # documents chunked by this run (a resumed run: only those left)
    embedded: int  # chunks embedded by this run
    chunks: int  # chunks of the new chunking
    agreement: Agreement | None  # over documents (see the module's docstring)
    swapped: bool
    graph_chunks_dropped: int = 0  # old chunks whose graph facts the swap dropped
    graph_chunks_extracted: int = 0  # new chunks whose facts were extracted after it


class Rechunker:
    """Builds the chunking ``chunking`` (made by ``chunker`` and ``embedder``) beside the
    current one, whose embedder is ``current``, then checks and swaps it."""

    def __init__(
        self,
        store: ChunkingRebuild,
        search: VectorSearch,
        chunks: ChunkExport,
        *,
        current: Embedder,
        chunker: Chunker,
        embedder: Embedder,
        chunking: Chunking,
        max_chunk_chars: int,
        batch: int = 256,
    ) -> None:
        checked_batch(batch)
        self.store = store
        self.search = search
        self.chunks = chunks
        self.current = current
        self.chunker = chunker
        self.embedder = embedder
        self.chunking = chunking
        self.max_chunk_chars = max_chunk_chars
        self.batch = batch

    def run(
        self,
        *,
        sample: int = 50,
        top_k: int = 10,
        swap: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> RechunkReport:
        """Build what is left, check it, and (``swap``) make it current."""
        chunked, embedded = self.build(progress)
        status = self.store.chunking_status()
        agreement = self.agreement(status, sample, top_k) if sample > 0 else None
        staged = status.staged.chunks if status.staged is not None else 0
        report = RechunkReport(status.documents, chunked, embedded, staged, agreement, False)
        if not swap:
            return report
        swapped = self.store.swap_chunking("staged")
        return RechunkReport(
            swapped.documents,
            chunked,
            embedded,
            swapped.chunks,
            agreement,
            True,
            graph_chunks_dropped=swapped.graph_chunks,
        )

    def build(self, progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
        """Chunk and embed every document not staged at its stored version; how many
        documents and chunks this call did. ``progress`` gets (documents staged, earlier
        runs' included; documents), during each batch's embedder call too: a batch's
        documents count as staged in proportion to its chunks embedded. Each batch is
        written while the next is chunked and embedded."""
        embedded = 0
        after: str | None = None
        pending: list[tuple[StoredText, list[Chunk]]] = []
        status = self.store.chunking_status()
        before = status.staged.documents if status.staged is not None else 0
        tally = Tally(before, status.documents, progress)
        with OneWriter() as writer:
            while page := self.store.unstaged_documents(after, DOCUMENTS_PER_PAGE):
                after = page[-1].document.id
                for stored in page:
                    pending.append((stored, self._chunks(stored)))
                    if sum(len(chunks) for _, chunks in pending) >= self.batch:
                        embedded += self._stage(pending, writer, tally)
                        pending = []
            if pending:
                embedded += self._stage(pending, writer, tally)
        return tally.done - before, embedded

    def _chunks(self, stored: StoredText) -> list[Chunk]:
        try:
            return checked_chunks(self.chunker.chunk(stored.document), self.max_chunk_chars)
        except IngestLimitExceeded as error:
            raise IngestLimitExceeded(f"{stored.document.source}: {error}") from None

    def _stage(
        self, pending: Sequence[tuple[StoredText, list[Chunk]]], writer: OneWriter, tally: Tally
    ) -> int:
        """Embed the documents' chunks and hand their write to ``writer``; how many chunks."""
        texts = [chunk.embedded_text for _, chunks in pending for chunk in chunks]
        dimension = self.chunking.space.dimension
        start_documents, embedded = tally.done, [0]

        def told(count: int) -> None:
            embedded[0] += count
            documents = start_documents + len(pending) * embedded[0] // len(texts)
            if documents > tally.done:
                tally.add(documents - tally.done)

        vectors = (
            np.asarray(embed_telling(self.embedder, texts, told), dtype=np.float32)
            if texts
            else np.empty((0, dimension), dtype=np.float32)
        ).reshape(len(texts), dimension)
        if tally.done < start_documents + len(pending):  # documents without chunks
            tally.add(start_documents + len(pending) - tally.done)
        writes, start = [], 0
        for stored, chunks in pending:
            end = start + len(chunks)
            writes.append(
                DocumentWrite(stored.document, chunks, vectors[start:end], stored.fingerprint)
            )
            start = end
        writer.submit(lambda: self.store.stage_chunks(self.chunking, writes))
        return len(texts)

    def agreement(self, status: ChunkingStatus, sample: int, top_k: int) -> Agreement | None:
        """The sampled search agreement of the staged chunking with the current one, over the
        documents of the top ``top_k`` chunks."""
        if status.staged is None or status.chunks == 0 or status.staged.chunks == 0:
            return None
        # The first page in chunk-id order is as good as a random sample: ids are hashes.
        chunks = self.chunks.chunk_page(None, sample)
        queries = [chunk.indexed_text[:QUERY_CHARS] for chunk in chunks]
        new = self.store.staged_documents_search(self.embedder.embed_documents(queries), top_k)
        overlap = found_current = found_staged = 0.0
        for chunk, query, staged_documents in zip(chunks, queries, new, strict=True):
            hits = self.search.vector_search(self.current.embed_query(query), top_k)
            current = {hit.chunk.document_id for hit in hits}
            staged = set(staged_documents)
            overlap += len(current & staged) / max(len(current), len(staged), 1)
            found_current += chunk.document_id in current
            found_staged += chunk.document_id in staged
        n = len(chunks)
        return Agreement(n, top_k, overlap / n, found_current / n, found_staged / n)


def kept_chunking(store: object, slot: Slot) -> ChunkingSlot | None:
    """The chunking ``store`` keeps in ``slot`` (None there, or in a store that keeps none)."""
    if not isinstance(store, ChunkingRebuild):
        return None
    status = store.chunking_status()
    return status.staged if slot == "staged" else status.previous
