"""One sync of a source into a collection: list, fetch what changed, write, checkpoint, prune.

The checkpoint (`SourceCheckpoints`) holds each item's committed version. An item listed with
its recorded version is unchanged and costs nothing; a changed one is fetched, and if its bytes
(and permissions and metadata) make the fingerprint its document already has, it is recorded
without being parsed or embedded. Documents are written in batches, one transaction each, and
only then are their items recorded: a sync killed midway resumes where the committed batches
end, and whatever it wrote before the checkpoint caught up is found unchanged, never doubled.

Pruning needs a complete listing: one the source says covered every item (not an incremental
one from a watermark, not a crawl cut short by a limit or an error). It removes the documents
of the recorded items the listing missed and that were recorded before it began (the frozen
time), so an item another sync recorded meanwhile is never taken for gone. The cursor
(watermark) advances only after a run in which nothing failed.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import MappingProxyType

from ragwright.errors import ConfigError, RagwrightError
from ragwright.models import Document, document_id_for
from ragwright.pipeline.ingest.document_chunking import fused_chunks
from ragwright.pipeline.ingest.documents import checked_chunks, chunks_within_limit, failure_reason
from ragwright.pipeline.ingest.ingestor import (
    BatchWriter,
    Failure,
    Ingestor,
    IngestReport,
    PendingDocument,
    with_principals,
)
from ragwright.pipeline.ingest.parse_worker import ParseWorker
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.ports import (
    Checkpoint,
    ItemRecord,
    ListingOutcome,
    Source,
    SourceCheckpoints,
    SourceItem,
)

#: Documents written per transaction (and checkpointed after it).
BATCH_DOCUMENTS = 32


class SourceSync:
    """Syncs the source named ``name`` into the ingestor's store; ``lock`` is taken around
    the run (the collection's ingest lock)."""

    def __init__(
        self,
        name: str,
        source: Source,
        ingestor: Ingestor,
        checkpoints: SourceCheckpoints,
        *,
        lock: Callable[[], AbstractContextManager[None]] = nullcontext,
        batch_documents: int = BATCH_DOCUMENTS,
    ) -> None:
        self.name = name
        self.source = source
        self.ingestor = ingestor
        self.checkpoints = checkpoints
        self.lock = lock
        self.batch_documents = batch_documents

    def run(self, *, full: bool = False) -> SyncReport:
        """One sync; ``full`` ignores the cursor, so the listing is complete and can prune."""
        with self.lock(), ParseWorker(self.ingestor.options.parse_limits) as worker:
            return _Run(self, worker).run(full)


class _Run:
    def __init__(self, sync: SourceSync, worker: ParseWorker) -> None:
        self.sync = sync
        self.worker = worker
        self.report = SyncReport()
        self.started = time.time()
        self.known = sync.ingestor.store.fingerprints()
        self.batch: list[tuple[SourceItem, PendingDocument]] = []

    def run(self, full: bool) -> SyncReport:
        sync, report = self.sync, self.report
        recorded = sync.checkpoints.checkpoint(sync.name)
        given = Checkpoint(None, recorded.items) if full else recorded
        outcome = ListingOutcome()
        listed: set[str] = set()
        try:
            for item in sync.source.list_items(given, outcome):
                listed.add(item.key)
                self._item(item, recorded.items.get(item.key))
        except (RagwrightError, OSError) as error:  # the listing broke off: nothing is pruned
            outcome.complete = False
            outcome.failures.append((sync.name, failure_reason(error)))
        self._flush()
        report.failed.extend(Failure(key, reason) for key, reason in outcome.failures)
        report.complete = outcome.complete and not outcome.failures
        if report.complete:
            self._prune(recorded, listed)
        if not report.failed:
            sync.checkpoints.set_cursor(sync.name, outcome.cursor, self.started)
        return report

    def _item(self, item: SourceItem, record: ItemRecord | None) -> None:
        if not self.sync.ingestor.parsers.supports(item.name):
            return  # as ingest skips a file no parser reads (it is listed: never pruned)
        stored = item.document_source in self.known  # not deleted behind the checkpoint
        if record is not None and record.version == item.version and stored:
            self.report.unchanged += 1
            if record.state != item.state:
                self._record([item])
            return
        try:
            pending = self._prepare(item)
        except (RagwrightError, OSError) as error:
            self.report.failed.append(Failure(item.document_source, failure_reason(error)))
            return
        if pending is None:  # the same document as stored: only the version moved
            self.report.unchanged += 1
            self._record([item])
            return
        self.batch.append((item, pending))
        if len(self.batch) >= self.sync.batch_documents:
            self._flush()

    def _prepare(self, item: SourceItem) -> PendingDocument | None:
        """The item's document ready to write; None when the stored one is the same."""
        ingestor = self.sync.ingestor
        data = self.sync.source.fetch(item)
        self.report.hashed += 1
        parser = ingestor.parsers.parser_for(item.name, data)
        metadata: dict[str, object] = {**item.metadata, "sync_source": self.sync.name}
        principals = ingestor.steps.principals_for(item.document_source, item.principals)
        extra = json.dumps(metadata, sort_keys=True, default=str)
        fingerprint = hashlib.sha256(
            f"{ingestor.fingerprint_data(data, parser)}\0{extra}".encode()
        ).hexdigest()
        fingerprint = with_principals(fingerprint, principals)
        if self.known.get(item.document_source) == fingerprint:
            return None
        parsed = self.worker.parse(parser, data, item.document_source)
        document = Document(
            id=document_id_for(item.document_source),
            source=item.document_source,
            content=parsed.content,
            metadata=MappingProxyType(
                {
                    **parsed.metadata,
                    **metadata,
                    "filename": item.name,
                    "content_type": parsed.content_type,
                }
            ),
            sections=parsed.sections,
            principals=principals,
        )
        options = ingestor.options
        # A document chunker made them with the text (None: the chunker makes them).
        fused = fused_chunks(document, parsed, ingestor.chunker)
        chunks = (
            chunks_within_limit(document, ingestor.chunker, options.max_chunk_chars)
            if fused is None
            else checked_chunks(fused, options.max_chunk_chars)
        )
        update = item.document_source in self.known
        return PendingDocument(document, chunks, fingerprint, update)

    def _flush(self) -> None:
        """Write the batch in one transaction, then record its items as committed."""
        batch, self.batch = self.batch, []
        if not batch:
            return
        self._refuse_overlap([item.document_source for item, _ in batch])
        ingestor = self.sync.ingestor
        written = IngestReport()
        batch_chunks = ingestor.options.embed_batch
        writer = BatchWriter(ingestor.store, ingestor.embedder, written, batch_chunks)
        for _, pending in batch:
            writer.add(pending)
        writer.flush()
        report = self.report
        report.added.extend(written.added)
        report.updated.extend(written.updated)
        report.failed.extend(written.failed)
        failed = {f.source for f in written.failed}
        self._record([item for item, _ in batch if item.document_source not in failed])
        for item, pending in batch:
            if item.document_source not in failed:
                self.known[item.document_source] = pending.fingerprint

    def _refuse_overlap(self, document_sources: list[str]) -> None:
        """`ConfigError` before writing a document another source's checkpoint holds: the two
        would overwrite each other's versions and prune each other's documents."""
        claimed = self.sync.checkpoints.claimed_by_others(self.sync.name, document_sources)
        if claimed:
            document, other = sorted(claimed.items())[0]
            raise ConfigError(
                f"the sources {other!r} and {self.sync.name!r} both hold {document!r} "
                f"({len(claimed)} such documents in this batch): two sources must not sync the "
                "same documents; narrow one of them (its root, prefix or URL), or remove one "
                "with `ragwright sync remove`"
            )

    def _record(self, items: list[SourceItem]) -> None:
        now = time.time()
        self.sync.checkpoints.record_items(
            self.sync.name,
            [(i.key, ItemRecord(i.version, i.document_source, i.state, now)) for i in items],
            [],
        )

    def _prune(self, recorded: Checkpoint, listed: set[str]) -> None:
        """Remove the documents of items a complete listing missed (recorded before it)."""
        gone = sorted(
            key
            for key, record in recorded.items.items()
            if key not in listed and record.synced_at < self.started
        )
        if not gone:
            return
        sources = sorted({recorded.items[key].document_source for key in gone})
        self.sync.ingestor.store.delete_many([document_id_for(s) for s in sources])
        self.sync.checkpoints.record_items(self.sync.name, [], gone)
        self.report.removed.extend(sources)
