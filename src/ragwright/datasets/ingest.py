"""`ingest_dataset`: write a dataset's frozen chunks into an index, embedding their texts.

Chunk ids, document ids, chunk order and offsets are the dataset's own; only the vectors are
computed here. A document whose chunks are unchanged since the last run is skipped; one whose
chunks changed is replaced in one transaction; one that is inconsistent is reported and skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ragwright.datasets.folder import read_dataset
from ragwright.datasets.frozen import FrozenDocument, frozen_documents
from ragwright.errors import EmbedderError
from ragwright.pipeline.ingest import Failure, IngestReport, IngestTarget, Progress
from ragwright.ports import DocumentWrite, Embedder

#: Chunks embedded and written per transaction.
BATCH_CHUNKS = 256


def ingest_dataset(
    folder: Path,
    store: IngestTarget,
    embedder: Embedder,
    progress: Callable[[Progress], None] | None = None,
) -> IngestReport:
    dataset = read_dataset(folder)
    items = list(frozen_documents(dataset))
    report = IngestReport(failed=[item for item in items if isinstance(item, Failure)])
    known = store.fingerprints()
    pending: list[FrozenDocument] = []
    documents = [item for item in items if isinstance(item, FrozenDocument)]
    for done, item in enumerate(documents, start=1):
        if known.get(item.document.source) == item.fingerprint:
            report.unchanged.append(item.document.source)
        else:
            pending.append(item)
        if sum(len(p.chunks) for p in pending) >= BATCH_CHUNKS or done == len(documents):
            _write(pending, store, embedder, known, report)
        if progress is not None:
            source = item.document.source
            progress(Progress(done, len(documents), report.chunks_written, source))
    return report


def _write(
    pending: list[FrozenDocument],
    store: IngestTarget,
    embedder: Embedder,
    known: dict[str, str],
    report: IngestReport,
) -> None:
    if not pending:
        return
    try:
        vectors = embedder.embed_documents(
            [c.indexed_text for item in pending for c in item.chunks]
        )
    except EmbedderError as error:
        report.failed.extend(
            Failure(i.document.source, f"embedding failed: {error}") for i in pending
        )
        pending.clear()
        return
    writes, start = [], 0
    for item in pending:
        end = start + len(item.chunks)
        writes.append(
            DocumentWrite(item.document, item.chunks, vectors[start:end], item.fingerprint)
        )
        start = end
    store.write(writes)
    for item in pending:
        source = item.document.source
        (report.updated if source in known else report.added).append(source)
    report.chunks_written += start
    pending.clear()
