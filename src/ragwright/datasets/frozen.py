"""A dataset's frozen chunk set as ragwright documents, keeping every chunk id and offset.

A dataset carries chunks, not whole documents. Each document's text is rebuilt by laying its
chunks at their offsets: overlapping chunks must agree character for character, and text
between chunks that the dataset does not carry becomes spaces, so each chunk's
``content[char_start:char_end] == text`` holds against the stored document exactly as in the
source it was cut from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from rag_connector.base import ChunkRecord
from rag_connector.dataset import CHUNKS_FILE, Dataset

from ragwright.errors import DatasetError
from ragwright.models import Chunk, Document
from ragwright.pipeline.ingest.ingestor import Failure

#: Stored with each document; a re-ingest of the same frozen chunks writes nothing.
FINGERPRINT_PREFIX = "dataset:"


@dataclass(frozen=True, slots=True)
class FrozenDocument:
    document: Document
    chunks: list[Chunk]
    fingerprint: str


def frozen_documents(dataset: Dataset) -> Iterator[FrozenDocument | Failure]:
    """Each document of ``dataset`` with its chunks, or a `Failure` naming the source and the
    reason (one inconsistent document does not stop the others)."""
    by_document: dict[str, list[ChunkRecord]] = {}
    for record in dataset.chunks:
        by_document.setdefault(record.doc_id, []).append(record)
    sources: dict[str, str] = {}
    for doc_id, records in by_document.items():
        source = _source(records[0])
        try:
            if sources.setdefault(source, doc_id) != doc_id:
                raise DatasetError(f"documents {sources[source]!r} and {doc_id!r} share it")
            yield _frozen(dataset, doc_id, source, records)
        except DatasetError as error:
            yield Failure(source, f"{dataset.path / CHUNKS_FILE}: {error}")


def _frozen(
    dataset: Dataset, doc_id: str, source: str, records: list[ChunkRecord]
) -> FrozenDocument:
    records = sorted(records, key=lambda r: r.doc_chunk_index)
    indices = [r.doc_chunk_index for r in records]
    if indices != list(range(len(records))):
        raise DatasetError(f"doc_chunk_index of {doc_id!r} is not 0..{len(records) - 1}")
    content = _content(records)
    metadata = {"dataset_id": dataset.dataset_id}
    document = Document(doc_id, source, content, MappingProxyType(metadata))
    chunks = [
        Chunk(
            id=r.chunk_id,
            document_id=doc_id,
            index=r.doc_chunk_index,
            text=r.text,
            char_start=int(r.char_start or 0),
            char_end=int(r.char_end or 0),
            metadata=MappingProxyType(dict(r.metadata or {})),
        )
        for r in records
    ]
    return FrozenDocument(document, chunks, _fingerprint(records))


def _content(records: Sequence[ChunkRecord]) -> str:
    """The document text the chunks were cut from, as far as they cover it."""
    content = ""
    for record in sorted(records, key=lambda r: (r.char_start or 0, r.doc_chunk_index)):
        start, end = record.char_start, record.char_end
        if not isinstance(start, int) or not isinstance(end, int):
            raise DatasetError(
                f"chunk {record.chunk_id!r} has no char_start/char_end; ragwright cites exact "
                "spans, so it needs every chunk's offsets"
            )
        if start < 0 or end - start != len(record.text):
            raise DatasetError(
                f"chunk {record.chunk_id!r} spans {start}..{end} but its text has "
                f"{len(record.text)} characters"
            )
        content += " " * (start - len(content))  # text the dataset does not carry
        overlap = max(0, min(end, len(content)) - start)
        if content[start : start + overlap] != record.text[:overlap]:
            raise DatasetError(
                f"chunk {record.chunk_id!r} disagrees with an overlapping chunk at "
                f"offsets {start}..{start + overlap}"
            )
        content += record.text[len(content) - start :] if end > len(content) else ""
    return content


def _source(record: ChunkRecord) -> str:
    relative = (record.metadata or {}).get("relative_path")
    return str(relative) if relative else record.source_file


def _fingerprint(records: Sequence[ChunkRecord]) -> str:
    rows = [(r.chunk_id, r.char_start, r.char_end, r.text, r.metadata) for r in records]
    encoded = json.dumps(rows, sort_keys=True, ensure_ascii=False, default=str).encode()
    return FINGERPRINT_PREFIX + hashlib.sha256(encoded).hexdigest()
