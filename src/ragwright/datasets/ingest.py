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
from ragwright.pipeline.ingest.ingestor import (
    BatchWriter,
    Failure,
    IngestReport,
    PendingDocument,
    Progress,
)
from ragwright.ports import Embedder, IngestTarget

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
    writer = BatchWriter(store, embedder, report, BATCH_CHUNKS)
    documents = [item for item in items if isinstance(item, FrozenDocument)]
    writer.write_all(
        ((d.document.source, _pending(d, known, report)) for d in documents),
        len(documents),
        progress,
    )
    return report


def _pending(
    item: FrozenDocument, known: dict[str, str], report: IngestReport
) -> PendingDocument | None:
    """The document to write, or None when it is unchanged since the last run."""
    source = item.document.source
    if known.get(source) == item.fingerprint:
        report.unchanged.append(source)
        return None
    return PendingDocument(item.document, item.chunks, item.fingerprint, source in known)
