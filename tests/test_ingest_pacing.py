"""Ingest at the embedder's pace: with a slow embedder, progress moves at least once a second
(of the embedder's time), counted in chunks embedded; a batch is written while the next one is
embedded; and the next sources are prepared while a batch is embedded."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ragwright.models import Chunk, Document
from ragwright.pipeline.ingest.ingestor import (
    BatchWriter,
    IngestReport,
    PendingDocument,
    Prepared,
    Progress,
)
from ragwright.ports import DocumentWrite
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.store_contract import make_document

#: Seconds of the fake clock one text takes to embed (3 texts a second: a slow CPU model).
PER_TEXT = 0.3


class SlowEmbedder(HashingEmbedder):
    """The hashing embedder on a fake clock that each text moves on by `PER_TEXT`."""

    def __init__(self, now: list[float]) -> None:
        super().__init__(32)
        self.now = now
        self.calls: list[int] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.now[0] += PER_TEXT * len(texts)
        return super().embed_documents(texts)


def _documents(count: int, chunks: int) -> list[tuple[Document, list[Chunk]]]:
    return [
        make_document(f"doc{i}.md", [f"text {i} part {j} of words" for j in range(chunks)])
        for i in range(count)
    ]


def _prepared(documents: list[tuple[Document, list[Chunk]]]) -> list[tuple[str, Prepared]]:
    return [
        (d.source, PendingDocument(d, chunks, f"fp-{d.source}", False)) for d, chunks in documents
    ]


def test_progress_moves_every_second_of_a_slow_embedder_in_chunks_embedded(tmp_path: Path) -> None:
    now = [0.0]
    embedder = SlowEmbedder(now)
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    events: list[tuple[float, Progress]] = []
    # one file of 120 chunks: one batch of 256, 36 s of embedding at once before
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: now[0])
    writer.write_all(_prepared(_documents(1, 120)), 1, lambda p: events.append((now[0], p)))
    times = [0.0] + [at for at, _ in events]
    assert max(b - a for a, b in itertools.pairwise(times)) <= 1.0
    embedded = [p.chunks_embedded for _, p in events]
    assert embedded == sorted(embedded) and len(set(embedded)) > 30 and embedded[-1] == 120
    assert events[-1][1] == Progress(1, 1, 120, "", 120)
    assert report.chunks_written == 120 and store.stats().chunks == 120
    store.close()


class HeldStore(SQLiteStore):
    """A store whose first write waits until the embedder is at work on the next batch."""

    def __init__(self, path: Path, started: threading.Event, embedded: threading.Event) -> None:
        super().__init__(path)
        self.started, self.embedded = started, embedded
        self.overlapped: list[bool] = []

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        if not self.overlapped:
            self.started.set()
            self.overlapped.append(self.embedded.wait(timeout=30))
        super().write(batch)


class NoticingEmbedder(HashingEmbedder):
    """Sets ``embedded`` when it is called after a write ``started``."""

    def __init__(self, started: threading.Event, embedded: threading.Event) -> None:
        super().__init__(32)
        self.started, self.embedded = started, embedded

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.started.is_set():
            self.embedded.set()
        return super().embed_documents(texts)


def test_a_batch_is_written_while_the_next_is_embedded(tmp_path: Path) -> None:
    started, embedded = threading.Event(), threading.Event()
    documents = _documents(4, 10)  # batches of 20 chunks: two documents each
    embedder = NoticingEmbedder(started, embedded)
    store = HeldStore(tmp_path / "index", started, embedded)
    store.bind_space(embedder.space)
    report = IngestReport()
    BatchWriter(store, embedder, report, 20).write_all(_prepared(documents), len(documents))
    assert store.overlapped == [True]
    assert report.chunks_written == 40 and report.added == [d.source for d, _ in documents]
    store.close()


def test_the_next_sources_are_prepared_while_a_batch_is_embedded(tmp_path: Path) -> None:
    prepared_ahead = threading.Event()
    documents = _documents(3, 30)

    def sources() -> Iterator[tuple[str, Prepared]]:
        for i, item in enumerate(_prepared(documents)):
            if i == 1:
                prepared_ahead.set()  # the second source, asked for while the first embeds
            yield item

    class Waiting(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__(32)
            self.saw: list[bool] = []

        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            if not self.saw:
                self.saw.append(prepared_ahead.wait(timeout=30))
            return super().embed_documents(texts)

    embedder = Waiting()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    BatchWriter(store, embedder, report, 30).write_all(sources(), len(documents))
    assert embedder.saw == [True]
    assert report.chunks_written == 90
    store.close()
