"""Ingestion: discover → parse → chunk → embed in batches → write, with bounded memory.

A file whose bytes, parser and chunking are unchanged since the last run costs one hash and
nothing else. A changed file replaces exactly its own chunks, in one transaction. A file that
fails is reported with its reason and the run goes on. Parsing runs in a worker process under a
time and a memory limit per file (`ParseWorker`), so a pathological file is reported too.
Documents that are already text (dataset records) take the same chunk → embed → write path
through `ingest_documents`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np

from ragwright import tracing
from ragwright.errors import (
    DocumentRefused,
    EmbedderError,
    IngestLimitExceeded,
    ParseBudgetSpent,
    ParseError,
    RagwrightError,
)
from ragwright.freed_memory import release_freed_memory
from ragwright.models import Chunk, Document, document_id_for
from ragwright.models.graph import ChunkFacts
from ragwright.permissions import PermissionRules
from ragwright.pipeline.ingest.discover import (
    Candidate,
    Discovery,
    discover,
    read_within,
    source_name,
    source_path,
)
from ragwright.pipeline.ingest.document_chunking import FusedParser, fused_chunks
from ragwright.pipeline.ingest.documents import (
    checked_chunks,
    chunks_within_limit,
    document_from,
    failure_reason,
    iter_chunks_within_limit,
    moved_document,
)
from ragwright.pipeline.ingest.kept_worker import KeptParseWorker
from ragwright.pipeline.ingest.overlap import PREFETCHED, OneWriter, Prefetched, prefetched
from ragwright.pipeline.ingest.pacing import AHEAD_MIN, SORTED_CALLS, EmbedPace
from ragwright.pipeline.ingest.parse_worker import DEFAULT_PARSE_LIMITS, ParseLimits, ParseWorker
from ragwright.ports import (
    ChunkBatch,
    Chunker,
    ChunkStream,
    DocumentWrite,
    DocumentWriter,
    Embedder,
    Extractor,
    IngestTarget,
    Parser,
    ReportingEmbedder,
    StreamedWrite,
    Vectors,
)

# Bumped when the way files become chunks changes, so every file is re-read once.
INGEST_FORMAT = "2"


class ParserLookup(Protocol):
    def parser_for(self, path: str | Path, head: bytes | None = None) -> Parser: ...

    def supports(self, path: str | Path) -> bool: ...

    @property
    def extensions(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class IngestOptions:
    follow_symlinks: bool = False
    max_file_size: int = 50 * 1024 * 1024
    max_files: int = 100_000
    max_chunk_chars: int = 20_000
    prune: bool = False
    #: Chunks embedded per call; bounds memory and lets the embedder sort by length.
    embed_batch: int = 256
    #: Per-file parse limits: seconds and MB (``None``: no limit). See `ParseWorker`.
    parse_timeout: float | None = DEFAULT_PARSE_LIMITS.timeout
    parse_memory_mb: int | None = DEFAULT_PARSE_LIMITS.memory_mb
    #: Seconds all files of the run may spend parsing together (``None``: no limit); the
    #: files left once they are spent are skipped (`ParseBudgetSpent`). The server's uploads
    #: set it.
    parse_budget: float | None = None
    #: A document longer than this (characters) is chunked, embedded and written batch by
    #: batch in one transaction, so its chunks and vectors are never all in memory (with a
    #: store that offers `StreamedWrite` and a chunker that offers `ChunkStream`). The price:
    #: the write transaction stays open while it is embedded, so searches through the same
    #: SQLite store object (a server's) wait that long; below this, ~7x the text is cheap.
    stream_chars: int = 8_000_000
    #: Who may read each document, by source path (the ``[[permissions]]`` rules; `Index`
    #: passes its configuration's): part of the fingerprint, so a changed rule rewrites.
    permissions: PermissionRules = field(default_factory=PermissionRules)

    @property
    def parse_limits(self) -> ParseLimits:
        return ParseLimits(self.parse_timeout, self.parse_memory_mb, self.parse_budget)


#: The limits and options of a run that says nothing: the CLI's, the server's and the
#: watcher's defaults read them here.
DEFAULT_INGEST = IngestOptions()


@dataclass(frozen=True, slots=True)
class Failure:
    source: str
    reason: str


@dataclass(frozen=True, slots=True)
class IngestWarning:
    """Something a file's text lacks although it was ingested (e.g. scanned pages unread)."""

    source: str
    message: str


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)
    #: Files left alone on purpose (symbolic links met inside folders, files left unread when
    #: the run's ``parse_budget`` was spent), with the reason.
    skipped: list[Failure] = field(default_factory=list)
    warnings: list[IngestWarning] = field(default_factory=list)
    chunks_written: int = 0
    #: Chunks whose graph facts were written with them (``ingest --graph``).
    chunks_extracted: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed

    def refused(self, errors: Sequence[DocumentRefused], writes: Sequence[DocumentWrite]) -> None:
        """The documents of ``writes`` that a store refused (``errors``, by source), counted as
        added or updated so far, as failed instead."""
        gone = {error.source for error in errors}
        if not gone:
            return
        self.added = [source for source in self.added if source not in gone]
        self.updated = [source for source in self.updated if source not in gone]
        lost = [write for write in writes if write.document.source in gone]
        self.chunks_written -= sum(len(write.chunks) for write in lost)
        self.chunks_extracted -= sum(len(write.facts) for write in lost)
        self.failed.extend(Failure(error.source, error.reason) for error in errors)

    def merge(self, other: IngestReport) -> None:
        """Add what ``other`` (a part of this run done elsewhere, e.g. on a Ray worker) says."""
        for name in ("added", "updated", "unchanged", "removed", "failed", "skipped", "warnings"):
            getattr(self, name).extend(getattr(other, name))
        self.chunks_written += other.chunks_written
        self.chunks_extracted += other.chunks_extracted


@dataclass(frozen=True, slots=True)
class Progress:
    files_done: int
    files_total: int
    chunks_written: int
    current: str
    #: Chunks embedded so far (ahead of those written: a batch is written once embedded).
    chunks_embedded: int = 0


@dataclass(slots=True)
class PendingDocument:
    """A document ready to be embedded and written (``is_update``: it replaces a stored one)."""

    document: Document
    chunks: list[Chunk]
    fingerprint: str
    is_update: bool


@dataclass(slots=True)
class StreamedDocument:
    """A document too long to hold all of its chunks: they are made as it is written."""

    document: Document
    chunks: Iterator[Chunk]
    fingerprint: str
    is_update: bool


Prepared = PendingDocument | StreamedDocument


def prepared_document(
    document: Document,
    fingerprint: str,
    is_update: bool,
    *,
    chunker: Chunker,
    store: DocumentWriter | None,
    options: IngestOptions,
) -> Prepared:
    """The document with its chunks, or with a stream of them when it is longer than
    ``options.stream_chars`` and the chunker and ``store`` (the writer it goes to) can
    stream."""
    limit = options.max_chunk_chars
    long = len(document.content) > options.stream_chars
    if long and isinstance(chunker, ChunkStream) and isinstance(store, StreamedWrite):
        chunks = iter_chunks_within_limit(document, chunker, limit)
        return StreamedDocument(document, chunks, fingerprint, is_update)
    return PendingDocument(
        document, chunks_within_limit(document, chunker, limit), fingerprint, is_update
    )


class BatchWriter:
    """Embeds and writes documents in batches of about ``batch_chunks`` chunks, one store
    transaction per batch, recording each in ``report``. If a batch cannot be embedded, or the
    store refuses a document of it (`DocumentRefused`), each of its documents is tried alone,
    so one document the embedder or the store refuses fails alone. With an
    ``extractor``, each batch's graph facts are found and written with its chunks.

    `write_all` keeps the embedder busy: the next files are read and chunked on a thread
    (`prefetched`) and each batch is written on another (`OneWriter`) while the next is
    embedded. Progress is told in chunks embedded. A `ReportingEmbedder` tells it during a
    call, so it takes a batch's chunks in as few calls as it can (to sort them by length and
    pad little): those waiting whenever the next file is not ready yet, and the rest when
    the batch is full; the files are prepared up to a batch's chunks ahead, and the chunks
    embedded ahead are written during the next call. Any other embedder's calls are sized to
    about half a second each (`EmbedPace`), progress told after each."""

    def __init__(
        self,
        store: DocumentWriter,
        embedder: Embedder,
        report: IngestReport,
        batch_chunks: int,
        extractor: Extractor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.report = report
        self.batch_chunks = batch_chunks
        self.extractor = extractor
        self.chunks_embedded = 0
        self._clock = clock
        self._pace = EmbedPace(batch_chunks, clock)
        self._reporting = embedder if isinstance(embedder, ReportingEmbedder) else None
        self._batch = _Batch()
        self._writer: OneWriter | None = None  # writes on a thread (inside `write_all`)
        self._items: Prefetched[tuple[str, Prepared | None]] | None = None  # (`write_all`)
        self._progress: Callable[[Progress], None] | None = None
        self._last = Progress(0, 0, 0, "")

    def write_all(
        self,
        prepared: Iterable[tuple[str, Prepared | None]],
        total: int,
        progress: Callable[[Progress], None] | None = None,
    ) -> None:
        """Add each prepared document (None: nothing to write for that source), telling
        ``progress`` after each source and each embedder call, and write what is left at the
        end. ``prepared`` is consumed on a thread of its own, ahead (see `_prefetched`)."""
        self._progress = progress
        self._last = Progress(0, total, self.report.chunks_written, "", self.chunks_embedded)
        with OneWriter() as writer, self._prefetched(prepared) as items:
            self._writer, self._items = writer, items
            try:
                for done, (source, item) in enumerate(items, start=1):
                    self._last = dataclasses.replace(self._last, files_done=done, current=source)
                    if item is not None:
                        self.add(item)
                    self._tell()
                self.flush()
            finally:
                self._writer, self._items = None, None
        # the last batch was written after the last source's update
        self._last = dataclasses.replace(self._last, files_done=total, current="")
        self._tell()
        self._progress = None

    def add(self, item: Prepared) -> None:
        if isinstance(item, StreamedDocument):
            self.flush()
            self._write_streamed(item)
            return
        self._batch.add(item)
        if len(self._batch.chunks) >= self.batch_chunks:
            self._write_pending()
        else:
            self._embed_ahead()

    def flush(self) -> None:
        """Write what is pending, and wait for every write to be done."""
        self._write_pending()
        if self._writer is not None:
            self._writer.wait()

    def _prefetched(
        self, prepared: Iterable[tuple[str, Prepared | None]]
    ) -> AbstractContextManager[Prefetched[tuple[str, Prepared | None]]]:
        """The sources prepared on a thread: up to a batch's chunks ahead for an embedder that
        takes a batch in one call (the next batch is ready when that call ends), else
        `PREFETCHED` sources (its calls are short)."""
        if self._reporting is None:
            return prefetched(prepared, PREFETCHED)
        return prefetched(prepared, self.batch_chunks, _chunks_prepared)

    def _write_pending(self) -> None:
        batch, self._batch = self._batch, _Batch()
        self._write(batch)

    def _embed_ahead(self) -> None:
        """Embed some of the batch's chunks as its documents arrive, rather than once it is
        full: the embedder works while the next files are parsed, and a run smaller than a
        batch does not parse every file before embedding any. A call takes the longest of
        the chunks waiting once `SORTED_CALLS` calls' worth wait (see `EmbedPace`). A
        `ReportingEmbedder` takes all of them in one call, once `AHEAD_MIN` wait and the next
        source is not ready: it would otherwise wait for that source; their documents are then
        written (on the writer's thread) while the next call embeds."""
        batch = self._batch
        if self._reporting is not None:
            items = self._items
            if items is None or batch.error is not None or batch.waiting < AHEAD_MIN:
                return
            if not items.ready() and self._embed_waiting(batch, batch.waiting):
                # Every chunk gathered so far is embedded: written now, while the next are
                # embedded, rather than after the run's last call (where a server's index
                # upkeep would keep the run waiting).
                self._write_pending()
            return
        while batch.error is None and batch.waiting >= SORTED_CALLS * self._pace.size():
            if not self._embed_waiting(batch, self._pace.size()):
                return

    def _embed_waiting(self, batch: _Batch, count: int) -> bool:
        """Embed the ``count`` longest chunks of ``batch`` waiting; False if the embedder
        failed (each document is tried alone when the batch is written)."""
        rows = batch.longest_waiting(count)
        try:
            batch.embedded(rows, self._embed_call([batch.chunks[i] for i in rows]))
        except EmbedderError as error:
            batch.error = error
            return False
        return True

    def _embed_batch(self, batch: _Batch) -> Vectors:
        """The batch's vectors: those embedded ahead, and the rest embedded now, longest
        first, in calls of `_call_size`."""
        vectors = np.empty((len(batch.chunks), self.embedder.space.dimension), dtype=np.float32)
        for rows, part in batch.take_parts():
            vectors[rows] = part
        rest = batch.longest_waiting(batch.waiting)
        start = 0
        while start < len(rest):
            rows = rest[start : start + self._call_size()]
            vectors[rows] = self._embed_call([batch.chunks[i] for i in rows])
            start += len(rows)
        return vectors

    def _tell(self) -> None:
        if self._progress is not None:
            self._progress(
                dataclasses.replace(
                    self._last,
                    chunks_written=self.report.chunks_written,
                    chunks_embedded=self.chunks_embedded,
                )
            )

    def _write(self, batch: _Batch) -> None:
        pending = batch.items
        if not pending:
            return
        try:
            if batch.error is not None:
                raise batch.error
            vectors = self._embed_batch(batch)
        except EmbedderError as error:
            if len(pending) == 1:
                failure = Failure(pending[0].document.source, f"embedding failed: {error}")
                self.report.failed.append(failure)
                return
            for item in pending:
                self._write(_Batch.of(item))
            return
        facts = self._extract(pending)
        writes, start = [], 0
        for item in pending:
            end = start + len(item.chunks)
            writes.append(
                DocumentWrite(
                    item.document,
                    item.chunks,
                    vectors[start:end],
                    item.fingerprint,
                    facts=[facts[chunk.id] for chunk in item.chunks if chunk.id in facts],
                )
            )
            start = end
        if self._writer is None:
            self._store(pending, writes)
        else:  # written while the next batch is embedded
            self._writer.submit(lambda: self._store(pending, writes))

    def _store(self, pending: list[PendingDocument], writes: list[DocumentWrite]) -> None:
        """Write the documents, those the store refuses reported as failed (see
        `write_refused_alone`)."""
        with tracing.span(tracing.INGEST_WRITE, documents=len(writes)):
            refused = write_refused_alone(self.store, writes)
        for item in pending:
            (self.report.updated if item.is_update else self.report.added).append(
                item.document.source
            )
        self.report.chunks_written += sum(len(write.chunks) for write in writes)
        self.report.chunks_extracted += sum(len(write.facts) for write in writes)
        self.report.refused(refused, writes)

    def _extract(self, pending: list[PendingDocument]) -> dict[str, ChunkFacts]:
        """The batch's graph facts by chunk id (none without an extractor)."""
        return self._extract_chunks([chunk for item in pending for chunk in item.chunks])

    def _extract_chunks(self, chunks: list[Chunk]) -> dict[str, ChunkFacts]:
        if self.extractor is None:
            return {}
        return {facts.chunk_id: facts for facts in self.extractor.extract(chunks)}

    def _write_streamed(self, item: StreamedDocument) -> None:
        """Write one long document batch by batch, in one transaction (`StreamedWrite`): a
        chunk over the limit or a batch the embedder refuses fails the whole document."""
        assert isinstance(self.store, StreamedWrite)  # prepared_document streams only then
        if self._writer is not None:
            self._writer.wait()  # the batches before it first, as written one by one
        release_freed_memory()  # what receiving the parsed text took and let go of
        extracted = [0]
        batches = self._batches(item.chunks, extracted)
        try:
            written = self.store.write_streamed(item.document, item.fingerprint, batches)
        except EmbedderError as error:
            failure = Failure(item.document.source, f"embedding failed: {error}")
            self.report.failed.append(failure)
            return
        except RagwrightError as error:
            self.report.failed.append(Failure(item.document.source, failure_reason(error)))
            return
        (self.report.updated if item.is_update else self.report.added).append(item.document.source)
        self.report.chunks_written += written
        self.report.chunks_extracted += extracted[0]

    def _batches(self, chunks: Iterator[Chunk], extracted: list[int]) -> Iterator[ChunkBatch]:
        """The chunks in batches of ``batch_chunks``, each embedded (and its graph facts
        found) only when the store asks for it; ``extracted`` counts the facts. The store
        asks for the first once it has written the document's row: SQLite's copies of the
        text are let go of by then, and given back."""
        release_freed_memory()
        while batch := list(itertools.islice(chunks, self.batch_chunks)):
            vectors = self._embed(batch)
            facts = self._extract_chunks(batch)
            extracted[0] += len(facts)
            yield ChunkBatch(batch, vectors, [facts[c.id] for c in batch if c.id in facts])

    def _embed(self, chunks: Sequence[Chunk]) -> Vectors:
        """The chunks' `embedded_text` embedded in calls of at most ``batch_chunks`` texts
        (each of `_call_size`, progress told after it), into one array: a huge
        document's vectors are never held twice, nor its texts (each a chunk's text after its
        table header) made for more than one call at a time."""
        vectors = np.empty((len(chunks), self.embedder.space.dimension), dtype=np.float32)
        start = 0
        while start < len(chunks):
            embedded = self._embed_call(chunks[start : start + self._call_size()])
            vectors[start : start + len(embedded)] = embedded
            start += len(embedded)
        return vectors

    def _call_size(self) -> int:
        """Texts for the next embedder call: a batch's for a `ReportingEmbedder`, which tells
        progress during the call; else about half a second's worth (`EmbedPace`)."""
        return self.batch_chunks if self._reporting is not None else self._pace.size()

    def _embed_call(self, chunks: Sequence[Chunk]) -> Vectors:
        """One embedder call, its pace measured and progress told after it (and during it,
        for a `ReportingEmbedder`)."""
        dimension = self.embedder.space.dimension
        texts = [c.embedded_text for c in chunks]
        before = self.chunks_embedded
        began = self._clock()
        with tracing.span(tracing.EMBED, texts=len(texts)):
            if self._reporting is not None:
                vectors = self._reporting.embed_documents_reporting(texts, self._embedded)
            else:
                vectors = self.embedder.embed_documents(texts)
            embedded = np.asarray(vectors)
        self._pace.measured(len(texts), self._clock() - began)
        if embedded.shape != (len(texts), dimension):
            raise EmbedderError(
                f"the embedder returned vectors of shape {embedded.shape} for {len(texts)} "
                f"texts, not ({len(texts)}, {dimension})"
            )
        self.chunks_embedded = before + len(texts)  # whatever the embedder told on the way
        self._tell()
        return embedded

    def _embedded(self, count: int) -> None:
        """A `ReportingEmbedder` embedded ``count`` more texts of the call it is in."""
        self.chunks_embedded += count
        self._tell()


def _chunks_prepared(item: tuple[str, Prepared | None]) -> int:
    """What a prepared source weighs ahead of the embedder: its chunks (a streamed document's
    as a whole batch: it is written alone), and one for the source itself."""
    prepared = item[1]
    if isinstance(prepared, PendingDocument):
        return 1 + len(prepared.chunks)
    if isinstance(prepared, StreamedDocument):
        return 1 << 30
    return 1


@dataclass(slots=True)
class _Batch:
    """The documents of one write, gathered, and the vectors of those of their chunks
    embedded so far (by the chunks' rows); ``error``: an embedder call on them failed."""

    items: list[PendingDocument] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    parts: list[tuple[list[int], Vectors]] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    error: EmbedderError | None = None

    @classmethod
    def of(cls, item: PendingDocument) -> _Batch:
        batch = cls()
        batch.add(item)
        return batch

    def add(self, item: PendingDocument) -> None:
        self.items.append(item)
        self.chunks.extend(item.chunks)

    @property
    def waiting(self) -> int:
        """Chunks not embedded yet."""
        return len(self.chunks) - len(self.done)

    def longest_waiting(self, count: int) -> list[int]:
        """The rows of the ``count`` longest chunks not embedded yet, longest first."""
        rows = [row for row in range(len(self.chunks)) if row not in self.done]
        rows.sort(key=lambda row: -len(self.chunks[row].text))
        return rows[:count]

    def embedded(self, rows: list[int], vectors: Vectors) -> None:
        self.parts.append((rows, vectors))
        self.done.update(rows)

    def take_parts(self) -> list[tuple[list[int], Vectors]]:
        """The vectors embedded so far, let go of here (they are copied into the batch's)."""
        parts, self.parts = self.parts, []
        return parts


@dataclass(slots=True)
class LoadedFile:
    """A file read where the run is planned (this process, or a distributed run's driver):
    its bytes, its fingerprint, and whether it replaces a stored document."""

    candidate: Candidate
    data: bytes
    fingerprint: str
    is_update: bool

    def take_data(self) -> bytes:
        """The bytes, let go of here: a huge file is not held twice while it is chunked."""
        data, self.data = self.data, b""
        return data


@dataclass(slots=True)
class Survey:
    """What a run knows before reading any file: the files found, the report so far (files
    refused by discovery, folders with nothing to read) and what the store holds."""

    found: Discovery
    report: IngestReport
    known: dict[str, str]


T = TypeVar("T")


def write_refused_alone(
    store: DocumentWriter, writes: Sequence[DocumentWrite]
) -> list[DocumentRefused]:
    """Write ``writes`` in one transaction; when the store refuses one of several
    (`DocumentRefused`: it checks them all before writing any), each alone, so that one fails
    alone. The refusals; everything else is written."""
    try:
        store.write(writes)
    except DocumentRefused as error:
        if len(writes) == 1:
            return [error]
        return [refused for write in writes for refused in write_refused_alone(store, [write])]
    return []


def recording_failure(report: IngestReport, source: str, step: Callable[[], T]) -> T | None:
    """``step()``, or None with the failure recorded in ``report``: one bad file never aborts
    the batch (a parser bug included)."""
    try:
        return step()
    except ParseBudgetSpent as error:  # not read at all: skipped, not failed
        report.skipped.append(Failure(source, error.reason))
    except (RagwrightError, OSError) as error:
        report.failed.append(Failure(source, failure_reason(error)))
    except Exception as error:  # a parser bug must not abort the batch
        report.failed.append(Failure(source, f"unexpected {type(error).__name__}: {error}"))
    return None


@dataclass(frozen=True, slots=True)
class FileSteps:
    """The per-file steps of every ingest engine, so a local run and a distributed one make
    the same documents, chunks and fingerprints: `load` where the run is planned, `prepare`
    where the work is done (this process, or a Ray worker)."""

    parsers: ParserLookup
    chunker: Chunker
    chunker_spec: str
    options: IngestOptions

    def load(self, candidate: Candidate, known: dict[str, str]) -> LoadedFile | None:
        """The file read and fingerprinted; None when it is unchanged since the last run."""
        data = read_within(candidate.path, self.options.max_file_size)
        fingerprint = self.fingerprint(data, self.parsers.parser_for(candidate.path, data))
        fingerprint = with_principals(fingerprint, self.principals_for(candidate.source))
        if known.get(candidate.source) == fingerprint:
            return None
        return LoadedFile(candidate, data, fingerprint, candidate.source in known)

    def prepare(
        self,
        loaded: LoadedFile,
        worker: ParseWorker,
        report: IngestReport,
        target: DocumentWriter | None = None,
    ) -> Prepared:
        """The file parsed (under the worker's limits) and chunked, its parser's warnings in
        ``report``; a long document's chunks as a stream when ``target`` can write one (see
        `prepared_document`). Raises what parsing or chunking raised (see
        `recording_failure`)."""
        candidate = loaded.candidate
        parser = self.parsers.parser_for(candidate.path, loaded.data)
        # The worker takes the bytes over: none is held here while the parsed text arrives.
        with tracing.span(tracing.INGEST_PARSE, source=candidate.source):
            parsed = worker.parse_taking(parser, loaded.take_data, candidate.source)
        report.warnings.extend(IngestWarning(candidate.source, w) for w in parsed.warnings)
        document = document_from(parsed, candidate)
        document = dataclasses.replace(document, principals=self.principals_for(candidate.source))
        # A document chunker made them with the text (None: the chunker makes them).
        with tracing.span(tracing.INGEST_CHUNK, source=candidate.source):
            fused = fused_chunks(document, parsed, self.chunker)
            if fused is not None:
                limit = self.options.max_chunk_chars
                return PendingDocument(
                    document, checked_chunks(fused, limit), loaded.fingerprint, loaded.is_update
                )
            # A long document's chunks stream on (chunked as they are embedded).
            return prepared_document(
                document,
                loaded.fingerprint,
                loaded.is_update,
                chunker=self.chunker,
                store=target,
                options=self.options,
            )

    def principals_for(self, source: str, given: Sequence[str] = ()) -> tuple[str, ...]:
        """Who may read the document of ``source``: ``given`` (its sync source's) and the
        rules'."""
        return self.options.permissions.principals_for(source, given)

    def fingerprint(self, data: bytes, parser: Parser) -> str:
        """The file's bytes and everything that decides its chunks: the parser, its settings
        (``parse_settings``, e.g. the OCR engine's version) and the chunker's."""
        digest = hashlib.sha256(data)
        parser_name = f"{type(parser).__module__}.{type(parser).__qualname__}"
        settings = getattr(parser, "parse_settings", "")
        parser_name += f"\0{settings}" if settings else ""
        digest.update(f"\0{INGEST_FORMAT}\0{parser_name}\0{self.chunker_spec}".encode())
        return digest.hexdigest()


class Ingestor:
    """Ingests files into a store. Built from its parts; knows no backend."""

    def __init__(
        self,
        store: IngestTarget,
        embedder: Embedder,
        parsers: ParserLookup,
        chunker: Chunker,
        *,
        chunker_spec: str,
        base: Path,
        options: IngestOptions | None = None,
        extractor: Extractor | None = None,
        parse_workers: KeptParseWorker | None = None,
    ) -> None:
        """``base`` is the folder sources are named relative to (see `source_name`); with an
        ``extractor`` the graph facts of every chunk written are written with it. With
        ``parse_workers``, each run's parse worker is the process the run before kept (see
        `KeptParseWorker`); without, each run starts and closes its own."""
        self.extractor = extractor
        self.parse_workers = parse_workers
        self.store = store
        self.embedder = embedder
        self.parsers = parsers
        self.chunker = chunker
        self.chunker_spec = chunker_spec
        self.base = base
        self.options = options or IngestOptions()
        self.steps = FileSteps(parsers, chunker, chunker_spec, self.options)

    def run(
        self, paths: Sequence[Path], progress: Callable[[Progress], None] | None = None
    ) -> IngestReport:
        with tracing.span(tracing.INGEST, paths=len(paths)) as span:
            with tracing.span(tracing.INGEST_DISCOVER) as discovering:
                survey = self.survey(paths)
                discovering.set("files", len(survey.found.candidates))
            candidates, known, report = survey.found.candidates, survey.known, survey.report
            with self._parse_worker() as worker:
                self.ingest_found(candidates, known, report, worker, progress)
            self.finish(paths, survey)
            span.set("chunks_written", survey.report.chunks_written)
            span.set("failed", len(survey.report.failed))
        return survey.report

    def _parse_worker(self) -> AbstractContextManager[ParseWorker]:
        limits = self.options.parse_limits
        if self.parse_workers is None:
            return ParseWorker(limits)
        return self.parse_workers.worker(limits)

    def survey(self, paths: Sequence[Path]) -> Survey:
        """Discover the files under ``paths`` (the limits applied) and what the store holds;
        `IngestLimitExceeded` when there are more files than ``max_files``."""
        options = self.options
        found = discover(
            list(paths),
            base=self.base,
            supports=self.parsers.supports,
            max_file_size=options.max_file_size,
            follow_symlinks=options.follow_symlinks,
        )
        if len(found.candidates) > options.max_files:
            raise IngestLimitExceeded(
                f"{len(found.candidates):,} files found, over the --max-files limit of "
                f"{options.max_files:,}; raise the limit or ingest a narrower path"
            )
        report = IngestReport(
            failed=[Failure(r.source, r.reason) for r in found.rejected if r.failed],
            skipped=[Failure(r.source, r.reason) for r in found.rejected if not r.failed],
            warnings=self._nothing_to_read(paths, found),
        )
        return Survey(found, report, self.store.fingerprints())

    def finish(self, paths: Sequence[Path], survey: Survey) -> None:
        """After the files were ingested: with ``prune``, remove the documents whose files
        vanished from ``paths``."""
        if self.options.prune:
            self._prune(paths, survey.found, survey.known, survey.report)

    def ingest_found(
        self,
        candidates: Sequence[Candidate],
        known: dict[str, str],
        report: IngestReport,
        worker: ParseWorker,
        progress: Callable[[Progress], None] | None = None,
    ) -> None:
        """Read, chunk, embed and write files already discovered, recording each in
        ``report``; one whose fingerprint is ``known`` for its source is unchanged."""
        writer = BatchWriter(
            self.store, self.embedder, report, self.options.embed_batch, self.extractor
        )
        prepared = (
            (candidate.source, self._prepare(candidate, known, report, worker))
            for candidate in candidates
        )
        writer.write_all(prepared, len(candidates), progress)

    def fingerprint(self, path: Path) -> str:
        """What a file's stored fingerprint would be, from one read of it: compared with the
        stored one, it tells an unchanged (touched) or moved file without parsing it."""
        data = path.read_bytes()
        return self.steps.fingerprint(data, self.parsers.parser_for(path, data))

    def fingerprint_data(self, data: bytes, parser: Parser) -> str:
        """What the stored fingerprint of ``data`` read by ``parser`` would be (bytes that
        come from a sync source rather than a file)."""
        return self.steps.fingerprint(data, parser)

    def moved(self, stored: Document, candidate: Candidate) -> tuple[Document, list[Chunk]]:
        """The stored document as ingesting it from ``candidate`` (the same bytes at another
        path) would make it, and its chunks, without reading the file again."""
        if isinstance(self.parsers.parser_for(candidate.path), FusedParser):
            # Its chunks came from the file, not from a chunker: read it again.
            raise ParseError(candidate.source, "a document chunker's file is read again")
        document = moved_document(stored, candidate)
        # The rules may give the new path other readers (a sync source's are not moved).
        principals = self.steps.principals_for(candidate.source)
        document = dataclasses.replace(document, principals=principals)
        return document, chunks_within_limit(document, self.chunker, self.options.max_chunk_chars)

    def _nothing_to_read(self, roots: Sequence[Path], found: Discovery) -> list[IngestWarning]:
        """A warning for each folder given in which no file can be read."""
        read = [Path(os.path.abspath(candidate.path)) for candidate in found.candidates]
        kinds = ", ".join(self.parsers.extensions)
        return [
            IngestWarning(
                source_name(root, self.base), f"no file here can be read; ragwright reads {kinds}"
            )
            for root in roots
            if root.is_dir()
            and not any(path.is_relative_to(os.path.abspath(root)) for path in read)
        ]

    def _prepare(
        self,
        candidate: Candidate,
        known: dict[str, str],
        report: IngestReport,
        worker: ParseWorker,
    ) -> Prepared | None:
        def prepare() -> Prepared | None:
            loaded = self.steps.load(candidate, known)
            if loaded is None:
                report.unchanged.append(candidate.source)
                return None
            return self.steps.prepare(loaded, worker, report, self.store)

        return recording_failure(report, candidate.source, prepare)

    def _prune(
        self,
        roots: Sequence[Path],
        found: Discovery,
        known: dict[str, str],
        report: IngestReport,
    ) -> None:
        absolute_roots = [Path(os.path.abspath(root)) for root in roots]

        def vanished_here(source: str) -> bool:
            path = Path(os.path.abspath(source_path(source, self.base)))
            inside = any(path == root or path.is_relative_to(root) for root in absolute_roots)
            # os.path.lexists: a file in a dot-directory (never walked) still exists
            return inside and source not in found.present and not os.path.lexists(path)

        vanished = [source for source in known if vanished_here(source)]
        self.store.delete_many([document_id_for(source) for source in vanished])
        report.removed.extend(sorted(vanished))


def ingest_documents(
    store: IngestTarget,
    embedder: Embedder,
    documents: Sequence[Document],
    chunker: Chunker,
    *,
    chunker_spec: str,
    options: IngestOptions | None = None,
    progress: Callable[[Progress], None] | None = None,
    extractor: Extractor | None = None,
) -> IngestReport:
    """Ingest documents that are already text (records of a dataset, say, not files): each is
    chunked, embedded and written in batches as `Ingestor` writes files, and one whose content,
    metadata and chunking are unchanged since the last run is skipped, so an interrupted run
    resumes. A document that cannot be chunked or embedded is reported; the rest go on."""
    options = options or IngestOptions()
    report = IngestReport()
    known = store.fingerprints()
    writer = BatchWriter(store, embedder, report, options.embed_batch, extractor)

    def prepare(document: Document) -> Prepared | None:
        principals = options.permissions.principals_for(document.source, document.principals)
        document = dataclasses.replace(document, principals=principals)
        fingerprint = with_principals(document_fingerprint(document, chunker_spec), principals)
        if known.get(document.source) == fingerprint:
            report.unchanged.append(document.source)
            return None
        is_update = document.source in known
        try:
            return prepared_document(
                document, fingerprint, is_update, chunker=chunker, store=store, options=options
            )
        except RagwrightError as error:
            report.failed.append(Failure(document.source, failure_reason(error)))
            return None

    prepared = ((document.source, prepare(document)) for document in documents)
    writer.write_all(prepared, len(documents), progress)
    return report


def with_principals(fingerprint: str, principals: Sequence[str]) -> str:
    """A fingerprint that changes when who may read the document does (unchanged when
    everyone may: the fingerprints of indexes written before permissions stay valid)."""
    if not principals:
        return fingerprint
    joined = "\0".join(principals)
    return hashlib.sha256(f"{fingerprint}\0principals\0{joined}".encode()).hexdigest()


def document_fingerprint(document: Document, chunker_spec: str) -> str:
    """What `ingest_documents` compares to skip a document: its content, its metadata and the
    chunking."""
    metadata = json.dumps(document.metadata, sort_keys=True, default=str)
    digest = hashlib.sha256(f"{document.content_hash}\0{metadata}".encode())
    digest.update(f"\0{INGEST_FORMAT}\0document\0{chunker_spec}".encode())
    return digest.hexdigest()
