"""`build_dataset`: parse and chunk a folder of files into a dataset folder (no embedding)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from rag_connector.base import ChunkRecord
from rag_connector.dataset import Dataset, exported_chunking

from ragwright.chunkers import create_chunker
from ragwright.connector.records import chunk_record
from ragwright.datasets.folder import write_dataset
from ragwright.errors import IngestLimitExceeded, RagwrightError
from ragwright.index import ChunkingConfig, Index
from ragwright.parsers.registry import ParserRegistry
from ragwright.pipeline.ingest.discover import Candidate, discover
from ragwright.pipeline.ingest.document_chunking import FusedFirst, ParserLookup, fused_chunks
from ragwright.pipeline.ingest.documents import (
    checked_chunks,
    chunks_within_limit,
    document_from,
    failure_reason,
)
from ragwright.pipeline.ingest.ingestor import Failure, IngestOptions
from ragwright.pipeline.ingest.parse_worker import ParseWorker
from ragwright.ports import Chunker

#: ``chunking.method`` of a dataset ragwright chunked itself.
CHUNKING_METHOD = "ragwright-chunker"


@dataclass
class BuildReport:
    dataset: Dataset
    documents: int
    failed: list[Failure] = field(default_factory=list)


def build_dataset(
    folder: Path,
    out: Path,
    *,
    chunking: ChunkingConfig | None = None,
    options: IngestOptions | None = None,
    name: str | None = None,
) -> BuildReport:
    """Parse and chunk every supported file under ``folder`` (with the ingest limits) and write
    the chunks as a dataset folder. Sources are named relative to ``folder``. Chunk sizes are in
    characters: no embedder is involved, so no token window applies. A file that fails is
    reported and skipped. Files are read as ingest reads them: the parser is checked against
    the file's magic bytes, and parsing runs under the per-file time and memory limits."""
    chunking = chunking or ChunkingConfig()
    options = options or IngestOptions()
    parsers = FusedFirst.from_entry_points(ParserRegistry.from_entry_points())
    chunker = create_chunker(chunking.name, **chunking.options)
    found = discover(
        [folder],
        base=folder.resolve(),
        supports=parsers.supports,
        max_file_size=options.max_file_size,
        follow_symlinks=options.follow_symlinks,
    )
    if len(found.candidates) > options.max_files:
        raise IngestLimitExceeded(
            f"{len(found.candidates):,} files found, over the limit of {options.max_files:,}"
        )
    failed = [Failure(r.source, r.reason) for r in found.rejected if r.failed]
    records: list[ChunkRecord] = []
    documents = 0
    with ParseWorker(options.parse_limits) as worker:
        for candidate in found.candidates:
            try:
                chunks = _document_chunks(candidate, parsers, worker, chunker, options)
            except (RagwrightError, OSError) as error:
                failed.append(Failure(candidate.source, failure_reason(error)))
                continue
            records.extend(chunks)
            documents += 1
    block = {"method": CHUNKING_METHOD, "chunker": json.loads(chunking.spec)}
    dataset = write_dataset(out, records, name=name or folder.resolve().name, chunking=block)
    return BuildReport(dataset, documents, failed)


def _document_chunks(
    candidate: Candidate,
    parsers: ParserLookup,
    worker: ParseWorker,
    chunker: Chunker,
    options: IngestOptions,
) -> list[ChunkRecord]:
    """One file's chunks as records, with metadata merged as the store would merge it."""
    data = candidate.path.read_bytes()
    parser = parsers.parser_for(candidate.path, data)
    parsed = worker.parse(parser, data, candidate.source)
    document = document_from(parsed, candidate)
    fused = fused_chunks(document, parsed, chunker)  # a document chunker made them with the text
    chunks = (
        chunks_within_limit(document, chunker, options.max_chunk_chars)
        if fused is None
        else checked_chunks(fused, options.max_chunk_chars)
    )
    return [
        chunk_record(
            replace(chunk, metadata={**document.metadata, **chunk.metadata}),
            document.source,
            document.content_hash,
        )
        for chunk in chunks
    ]


def export_dataset(index: Index, out: Path, *, name: str | None = None) -> Dataset:
    """Write an index's chunks, as stored, to a dataset folder (documents by source, chunks in
    order)."""
    records: list[ChunkRecord] = []
    for info in index.documents():
        chunks = index.chunks_of(info.id)
        records.extend(chunk_record(c, info.source, info.content_hash) for c in chunks)
    return write_dataset(
        out,
        records,
        name=name or _index_name(index),
        chunking=exported_chunking("ragwright"),
    )


def _index_name(index: Index) -> str:
    """A dataset's default name: the index directory's, or the database's for a URL."""
    if isinstance(index.location, Path):
        return index.location.resolve().name
    return index.location.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0] or "index"
