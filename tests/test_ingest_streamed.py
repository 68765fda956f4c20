"""A document longer than ``stream_chars`` is chunked, embedded and written batch by batch in
one transaction (`StreamedWrite`), so its chunks and vectors are never all in memory; the
stored result is exactly what the all-at-once path stores. (The memory figures themselves are
measured by benchmarks/ingest_memory.py; these tests hold the mechanism.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from ragwright.chunkers import create_chunker
from ragwright.errors import EmbedderError, IngestLimitExceeded
from ragwright.models import Document, document_id_for
from ragwright.pipeline.ingest.discover import read_within
from ragwright.pipeline.ingest.ingestor import IngestOptions, IngestReport, ingest_documents
from ragwright.ports import ChunkBatch, DocumentWrite, Vectors
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder

WORDS = "the index keeps every chunk of text with its vector and offsets in one database".split()
STREAMED = IngestOptions(stream_chars=1_000, embed_batch=8)
WHOLE = IngestOptions(embed_batch=8)


def long_document(version: int = 1, sentences: int = 400) -> Document:
    """One line of sentences, about 40 chunks of the default chunker."""
    words = [WORDS[(i * 7 + version) % len(WORDS)] for i in range(sentences * 12)]
    text = ". ".join(" ".join(words[i : i + 12]).capitalize() for i in range(0, len(words), 12))
    source = "long.txt"
    return Document(document_id_for(source), source, text + ".", MappingProxyType({"v": version}))


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, noting each call in ``events`` (and failing the ``fail_on``-th)."""

    def __init__(self, events: list[str], fail_on: int | None = None) -> None:
        super().__init__()
        self.events = events
        self.fail_on = fail_on
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.calls == self.fail_on:
            raise EmbedderError("the model refused this batch")
        self.events.append(f"embed {len(texts)}")
        return super().embed_documents(texts)


class RecordingStore:
    """A real SQLite store whose streamed writes note each batch as it is consumed."""

    def __init__(self, store: SQLiteStore, events: list[str]) -> None:
        self.store = store
        self.events = events

    def fingerprints(self) -> dict[str, str]:
        return self.store.fingerprints()

    def write(self, batch: Sequence[DocumentWrite]) -> None:
        self.events.append(f"write {sum(len(item.chunks) for item in batch)} at once")
        self.store.write(batch)

    def delete_many(self, document_ids: Sequence[str]) -> int:
        return self.store.delete_many(document_ids)

    def write_streamed(
        self, document: Document, fingerprint: str, batches: Iterable[ChunkBatch]
    ) -> int:
        def noted() -> Iterator[ChunkBatch]:
            for batch in batches:
                self.events.append(f"write {len(batch.chunks)}")
                yield batch

        return self.store.write_streamed(document, fingerprint, noted())


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "index") as opened:
        opened.bind_space(HashingEmbedder().space)
        yield opened


def ingest(
    store: RecordingStore | SQLiteStore,
    document: Document,
    options: IngestOptions,
    embedder: HashingEmbedder | None = None,
) -> IngestReport:
    return ingest_documents(
        store,
        embedder or HashingEmbedder(),
        [document],
        create_chunker("recursive"),
        chunker_spec="recursive",
        options=options,
    )


def _calls_joined(events: list[str]) -> list[str]:
    """The events with a batch's embedder calls as one."""
    joined: list[str] = []
    for event in events:
        if event.startswith("embed ") and joined and joined[-1].startswith("embed "):
            joined[-1] = f"embed {int(joined[-1].split()[1]) + int(event.split()[1])}"
        else:
            joined.append(event)
    return joined


def test_each_batch_is_embedded_only_when_the_store_takes_it(store: SQLiteStore) -> None:
    events: list[str] = []
    report = ingest(
        RecordingStore(store, events), long_document(), STREAMED, RecordingEmbedder(events)
    )
    assert report.ok and report.chunks_written > 3 * 8
    events = _calls_joined(events)
    # embed, write, embed, write, …: never two batches embedded ahead of the store
    assert events[0::2] == [e for e in events if e.startswith("embed")]
    assert all(event in ("write 8", "embed 8") for event in events[:-2])
    assert events[1::2] == [e.replace("embed", "write") for e in events[0::2]]


def test_a_streamed_document_is_stored_exactly_as_one_written_whole(
    store: SQLiteStore, tmp_path: Path
) -> None:
    document = long_document()
    assert ingest(store, document, STREAMED).ok
    with SQLiteStore(tmp_path / "whole") as whole:
        whole.bind_space(HashingEmbedder().space)
        events: list[str] = []
        assert ingest(RecordingStore(whole, events), document, WHOLE).ok
        assert all(e.endswith("at once") for e in events)  # the other path, for comparison
        expected = whole.chunks_of(document.id)
        expected_vectors = whole.chunk_vectors([c.id for c in expected])
        assert whole.get_document(document.id) == store.get_document(document.id)
    streamed = store.chunks_of(document.id)
    assert streamed == expected
    vectors = store.chunk_vectors([c.id for c in streamed])
    assert all(np.array_equal(vectors[c.id], expected_vectors[c.id]) for c in streamed)
    content = document.content
    assert all(content[c.char_start : c.char_end] == c.text for c in streamed)


def test_a_batch_the_embedder_refuses_leaves_the_previous_version_whole(
    store: SQLiteStore,
) -> None:
    assert ingest(store, long_document(version=1), STREAMED).ok
    before = store.chunks_of(document_id_for("long.txt"))
    events: list[str] = []
    # the 3rd batch's call (the hashing embedder tells progress during a call, so a batch is
    # one call; `HashingEmbedder.embed_documents_reporting` embeds 16 texts a part)
    refused = ingest(store, long_document(version=2), STREAMED, RecordingEmbedder(events, 3))
    assert [f.reason for f in refused.failed] == ["embedding failed: the model refused this batch"]
    assert refused.chunks_written == 0 and not refused.updated
    # two batches (16 chunks) were embedded and written, then rolled back
    assert sum(int(event.split()[1]) for event in events) == 16
    stored = store.get_document(document_id_for("long.txt"))
    assert stored is not None and stored.metadata["v"] == 1
    assert store.chunks_of(stored.id) == before


def test_a_chunk_over_the_limit_fails_the_streamed_document(store: SQLiteStore) -> None:
    options = IngestOptions(stream_chars=1_000, embed_batch=8, max_chunk_chars=500)
    report = ingest(store, long_document(), options)
    assert [f.source for f in report.failed] == ["long.txt"]
    assert "exceeds the maximum chunk size of 500" in report.failed[0].reason
    assert store.get_document(document_id_for("long.txt")) is None


def test_a_file_is_never_read_past_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "grew.txt"
    path.write_bytes(b"x" * 11)
    assert read_within(path, 11) == b"x" * 11
    with pytest.raises(IngestLimitExceeded, match="over the --max-file-size limit of 10"):
        read_within(path, 10)
