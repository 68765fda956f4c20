"""ragwright values as rag-connector records (shared by the connector and dataset folders)."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from rag_connector.base import ChunkRecord, RetrievedChunk

from ragwright.models import Chunk, Hit


def chunk_record(chunk: Chunk, source: str, source_fingerprint: str) -> ChunkRecord:
    """A chunk as rag-connector's record. The source's identity and fingerprint (the sha256 of
    the document's text) go into metadata, where hosts look for them to detect changes."""
    metadata = json.loads(json.dumps(dict(chunk.metadata), default=str))
    metadata.update(
        source_identity=source,
        source_fingerprint=source_fingerprint,
        relative_path=source,
        file_type=PurePosixPath(source).suffix.lstrip("."),
    )
    return ChunkRecord(
        chunk_id=chunk.id,
        doc_id=chunk.document_id,
        source_file=source,
        doc_chunk_index=chunk.index,
        global_index=None,
        text=chunk.text,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        metadata=metadata,
    )


def retrieved(rank: int, hit: Hit) -> RetrievedChunk:
    """A hit as rag-connector's result: rank from 0, the score as ragwright scored it (every
    ragwright scale is higher-is-better), with its scale and span in metadata."""
    chunk = hit.chunk
    return RetrievedChunk(
        chunk_id=chunk.id,
        text=chunk.text,
        score=float(hit.score),
        rank=rank,
        doc_id=chunk.document_id,
        metadata={
            "scale": hit.scale.value,
            "source_file": hit.source,
            "doc_chunk_index": chunk.index,
            "char_start": chunk.char_start,
            "char_end": chunk.char_end,
        },
    )
