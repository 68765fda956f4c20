"""Ingest at the embedder's pace: with a slow embedder, progress moves at least once a second
(of the embedder's time), counted in chunks embedded; a batch is written while the next one is
embedded; the next sources are prepared while a batch is embedded; and a batch's chunks are
embedded as its documents arrive, not once it is full.

Both kinds of embedder: one that tells progress during a call (`ReportingEmbedder`, as the
shipped ones do), handed as many chunks as are ready in one call, and one without it (a
third-party plugin's), whose calls ingest sizes to about half a second each."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import EmbedderError
from ragwright.models import Chunk, Document, EmbeddingSpace
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


class SlowEmbedder:
    """A third-party embedder (only `Embedder`'s methods): the hashing embedder's vectors, on
    a fake clock that each text moves on by `PER_TEXT`."""

    def __init__(self, now: list[float]) -> None:
        self.hashing = HashingEmbedder(32)
        self.now = now
        self.calls: list[int] = []

    @property
    def space(self) -> EmbeddingSpace:
        return self.hashing.space

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        self.now[0] += PER_TEXT * len(texts)
        return self.hashing.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.hashing.embed_query(text)


#: Texts a `SlowReportingEmbedder` embeds between two reports (as a model runs its batches).
PART = 2


class SlowReportingEmbedder(SlowEmbedder):
    """`SlowEmbedder` that tells progress during a call (`ReportingEmbedder`), every `PART`
    texts; ``reporting_calls``: the texts of each call."""

    def __init__(self, now: list[float]) -> None:
        super().__init__(now)
        self.reporting_calls: list[int] = []

    def embed_documents_reporting(
        self, texts: Sequence[str], embedded: Callable[[int], None]
    ) -> np.ndarray:
        self.reporting_calls.append(len(texts))
        parts = []
        for start in range(0, len(texts), PART):
            parts.append(self.embed_documents(texts[start : start + PART]))
            embedded(len(parts[-1]))
        return np.concatenate(parts)


SLOW_EMBEDDERS = [SlowEmbedder, SlowReportingEmbedder]


def _documents(count: int, chunks: int) -> list[tuple[Document, list[Chunk]]]:
    return [
        make_document(f"doc{i}.md", [f"text {i} part {j} of words" for j in range(chunks)])
        for i in range(count)
    ]


def _prepared(documents: list[tuple[Document, list[Chunk]]]) -> list[tuple[str, Prepared]]:
    return [
        (d.source, PendingDocument(d, chunks, f"fp-{d.source}", False)) for d, chunks in documents
    ]


@pytest.mark.parametrize("kind", SLOW_EMBEDDERS)
def test_progress_moves_every_second_of_a_slow_embedder_in_chunks_embedded(
    tmp_path: Path, kind: type[SlowEmbedder]
) -> None:
    now = [0.0]
    embedder = kind(now)
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
    if isinstance(embedder, SlowReportingEmbedder):
        assert embedder.reporting_calls == [120]  # one call: sorted and batched as one
    store.close()


def test_a_reporting_embedder_is_handed_what_waits_when_the_next_file_is_not_ready(
    tmp_path: Path,
) -> None:
    """The chunks waiting go to the embedder as soon as the next source is late (it would
    wait otherwise), all in one call; while the sources come quicker, they gather."""
    documents = _documents(6, 10)
    called = threading.Event()
    late: list[bool] = []

    def sources() -> Iterator[tuple[str, Prepared]]:
        for i, item in enumerate(_prepared(documents)):
            if i == 2:  # the third is late: ready only once the embedder is at work
                late.append(called.wait(timeout=30))
            yield item

    class Noticing(SlowReportingEmbedder):
        def embed_documents_reporting(
            self, texts: Sequence[str], embedded: Callable[[int], None]
        ) -> np.ndarray:
            called.set()
            return super().embed_documents_reporting(texts, embedded)

    embedder = Noticing([0.0])
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(sources(), len(documents))
    assert late == [True]
    assert embedder.reporting_calls[0] == 20  # the two first files', in one call
    assert sum(embedder.reporting_calls) == 60
    assert report.chunks_written == 60 and report.added == [d.source for d, _ in documents]
    _assert_stored_as_embedded(store, documents)
    store.close()


def test_a_batch_of_sources_is_prepared_while_a_reporting_embedder_embeds(
    tmp_path: Path,
) -> None:
    """Sources are prepared up to a batch's chunks ahead, not a fixed few: the next call
    finds its chunks ready when this one ends."""
    documents = _documents(12, 10)  # 120 chunks: under one batch of 256
    yielded = [0]

    def sources() -> Iterator[tuple[str, Prepared]]:
        for item in _prepared(documents):
            yielded[0] += 1
            yield item

    class Waiting(SlowReportingEmbedder):
        def __init__(self) -> None:
            super().__init__([0.0])
            self.saw_all: list[bool] = []

        def embed_documents_reporting(
            self, texts: Sequence[str], embedded: Callable[[int], None]
        ) -> np.ndarray:
            if not self.saw_all:
                deadline = time.monotonic() + 30
                while yielded[0] < len(documents) and time.monotonic() < deadline:
                    time.sleep(0.01)
                self.saw_all.append(yielded[0] == len(documents))
            return super().embed_documents_reporting(texts, embedded)

    embedder = Waiting()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(sources(), len(documents))
    assert embedder.saw_all == [True]
    assert report.chunks_written == 120
    _assert_stored_as_embedded(store, documents)
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


def test_a_run_smaller_than_a_batch_is_embedded_while_its_sources_are_prepared(
    tmp_path: Path,
) -> None:
    """Embedding starts with the first files, not once a batch's worth (or the run) is read."""
    documents = _documents(6, 10)  # 60 chunks: less than one batch of 256
    yielded = [0]

    def sources() -> Iterator[tuple[str, Prepared]]:
        for item in _prepared(documents):
            yielded[0] += 1
            yield item

    class Counting(SlowEmbedder):
        def __init__(self) -> None:
            super().__init__([0.0])
            self.sources_at_call: list[int] = []

        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            self.sources_at_call.append(yielded[0])
            return super().embed_documents(texts)

    embedder = Counting()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(sources(), len(documents))
    # the prepare thread is at most a few sources ahead (`PREFETCHED`) of the first call
    assert embedder.sources_at_call[0] < len(documents)
    assert report.chunks_written == 60 and report.added == [d.source for d, _ in documents]
    _assert_stored_as_embedded(store, documents)
    store.close()


def test_chunks_embedded_ahead_are_written_while_the_rest_are_embedded(tmp_path: Path) -> None:
    """A run smaller than a batch: the documents of the first call (handed over when the
    next file was late) are written before the second call ends, not after the run's last
    call."""
    documents = _documents(6, 10)
    first_call_done = threading.Event()
    calls_returned = [0]
    returned_at_write: list[int] = []

    def sources() -> Iterator[tuple[str, Prepared]]:
        for i, item in enumerate(_prepared(documents)):
            if i == 2:  # late: the first two files go to the embedder alone
                first_call_done.wait(timeout=30)
            yield item

    class Recording(SQLiteStore):
        def write(self, batch: Sequence[DocumentWrite]) -> None:
            super().write(batch)
            returned_at_write.append(calls_returned[0])

    class Slow(SlowReportingEmbedder):
        def embed_documents_reporting(
            self, texts: Sequence[str], embedded: Callable[[int], None]
        ) -> np.ndarray:
            vectors = super().embed_documents_reporting(texts, embedded)
            if len(self.reporting_calls) == 1:
                first_call_done.set()
            else:  # the second call ends once something is written (or after 5 s)
                deadline = time.monotonic() + 5
                while not returned_at_write and time.monotonic() < deadline:
                    time.sleep(0.01)
            calls_returned[0] += 1
            return vectors

    embedder = Slow([0.0])
    store = Recording(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(sources(), len(documents))
    assert embedder.reporting_calls == [20, 40]
    assert returned_at_write == [1, 2]  # the first two files written before the 2nd call ended
    assert report.chunks_written == 60 and report.added == [d.source for d, _ in documents]
    _assert_stored_as_embedded(store, documents)
    store.close()


class Refusing(SlowEmbedder):
    """The slow embedder, refusing any text that mentions poison."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any("poison" in text for text in texts):
            raise EmbedderError("the model refused this text")
        return super().embed_documents(texts)


class RefusingReporting(SlowReportingEmbedder, Refusing):
    """`Refusing`, telling progress during a call."""


@pytest.mark.parametrize("kind", [Refusing, RefusingReporting])
def test_a_document_refused_while_embedded_ahead_fails_alone(
    tmp_path: Path, kind: type[SlowEmbedder]
) -> None:
    documents = _documents(4, 10)
    documents[1] = make_document("poison.md", [f"poison part {j}" for j in range(10)])
    embedder = kind([0.0])
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(_prepared(documents), len(documents))
    assert [(f.source, f.reason) for f in report.failed] == [
        ("poison.md", "embedding failed: the model refused this text")
    ]
    kept = [documents[0], *documents[2:]]
    assert report.added == [d.source for d, _ in kept] and report.chunks_written == 30
    _assert_stored_as_embedded(store, kept)
    store.close()


def _assert_stored_as_embedded(
    store: SQLiteStore, documents: list[tuple[Document, list[Chunk]]]
) -> None:
    """Each document's chunks stored as made, each with the embedder's vector of its text."""
    reference = HashingEmbedder(32)
    for document, chunks in documents:
        assert store.chunks_of(document.id) == chunks
        stored = store.chunk_vectors([c.id for c in chunks])
        expected = reference.embed_documents([c.text for c in chunks])
        assert all(np.array_equal(stored[c.id], v) for c, v in zip(chunks, expected, strict=True))


def test_an_embedder_call_takes_chunks_of_about_one_length(tmp_path: Path) -> None:
    """The embedder pads each batch to its longest text: a call takes the longest chunks
    waiting, not the next ones in document order, which alternate short and long here."""
    documents = [
        make_document(
            f"doc{i}.md", [("long " * 40 if j % 2 else "short ") + str(j) for j in range(10)]
        )
        for i in range(8)
    ]

    class Recording(SlowEmbedder):
        def __init__(self) -> None:
            super().__init__([0.0])
            self.lengths: list[set[bool]] = []

        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            self.now[0] -= PER_TEXT * len(texts) * 0.9  # ~30 texts a second: calls of ~16
            self.lengths.append({len(text) > 100 for text in texts})
            return super().embed_documents(texts)

    embedder = Recording()
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(embedder.space)
    report = IngestReport()
    writer = BatchWriter(store, embedder, report, 256, clock=lambda: embedder.now[0])
    writer.write_all(_prepared(documents), len(documents))
    assert len(embedder.lengths) > 4
    mixed = [kinds for kinds in embedder.lengths if len(kinds) > 1]
    assert len(mixed) <= 1  # where the long ones run out
    assert report.chunks_written == 80
    _assert_stored_as_embedded(store, documents)
    store.close()
