"""One ingest worker: parses, chunks and embeds the files it is sent, whole documents only.

It runs the same per-file steps (`FileSteps.prepare`) and the same batch writer (`BatchWriter`)
as a local ingest, so a document comes out the same wherever it was made. The embedder and the
parse worker (a child process under the per-file time and memory limits) are made once, when
the worker starts. With a server store the worker writes each batch of whole documents in one
transaction itself; otherwise it hands the embedded documents back for the driver to write.
This class knows nothing of Ray: the Ray actor is this class, wrapped where the run starts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from ragwright.distributed.recipe import WorkerRecipe
from ragwright.pipeline.ingest.ingestor import (
    BatchWriter,
    FileSteps,
    IngestReport,
    LoadedFile,
    recording_failure,
)
from ragwright.pipeline.ingest.parse_worker import ParseWorker
from ragwright.ports import DocumentWrite, DocumentWriter, Store, StoreBackend


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """What a worker did with one task's files: its part of the report, and the documents it
    embedded but did not write (none when it wrote them itself)."""

    report: IngestReport
    writes: list[DocumentWrite] = field(default_factory=list)


class _Collected:
    """A writer that keeps the batches for the driver instead of writing them."""

    def __init__(self) -> None:
        self.writes: list[DocumentWrite] = []

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        self.writes.extend(batch)


class DocumentWorker:
    """Made once per worker process from a `WorkerRecipe`; `ingest` runs one task."""

    def __init__(self, recipe: WorkerRecipe) -> None:
        self.recipe = recipe
        self.embedder = recipe.embedder.make()
        chunker = recipe.chunker.make(self.embedder)
        self.steps = FileSteps(recipe.parsers, chunker, recipe.chunker_spec, recipe.options)
        self.parse_worker = ParseWorker(recipe.options.parse_limits)
        self._opened: tuple[StoreBackend, Store] | None = None
        if recipe.store is not None:
            self._opened = recipe.store.open()

    def pid(self) -> int:
        """This worker's process id (the driver asks once, to know the worker started)."""
        return os.getpid()

    def ingest(self, files: Sequence[LoadedFile]) -> WorkerResult:
        """Parse, chunk, embed and write (or return) these files, each a whole document; a
        file that fails is in the report and the others go on."""
        report = IngestReport()
        collected = _Collected()
        target: DocumentWriter = collected if self._opened is None else self._opened[1]
        writer = BatchWriter(target, self.embedder, report, self.recipe.options.embed_batch)
        for loaded in files:
            prepare = partial(self.steps.prepare, loaded, self.parse_worker, report, target)
            item = recording_failure(report, loaded.candidate.source, prepare)
            if item is not None:
                writer.add(item)
        writer.flush()
        return WorkerResult(report, collected.writes)

    def close(self) -> None:
        self.parse_worker.close()
        if self._opened is not None:
            backend, store = self._opened
            store.close()
            backend.close()
            self._opened = None
