"""From a parsed file to a document and its chunks: the steps ingest and dataset builds share.

Both must agree exactly (a dataset built from a folder has the chunks an ingest of that folder
would store), so they live here once.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType

from ragwright.errors import DocumentRefused, IngestLimitExceeded, ParseError
from ragwright.models import Chunk, Document, ParsedDocument, document_id_for
from ragwright.pipeline.ingest.discover import Candidate
from ragwright.ports import Chunker, ChunkStream


def document_from(parsed: ParsedDocument, candidate: Candidate) -> Document:
    """The document a parsed file becomes, with the file's name and content type in its
    metadata beside what the parser found."""
    metadata = {
        **parsed.metadata,
        "filename": candidate.path.name,
        "content_type": parsed.content_type,
    }
    return Document(
        id=document_id_for(candidate.source),
        source=candidate.source,
        content=parsed.content,
        metadata=MappingProxyType(metadata),
        sections=parsed.sections,
    )


def moved_document(stored: Document, candidate: Candidate) -> Document:
    """A stored document as `document_from` would make it from ``candidate``: the same bytes
    at another path (so the same parser, content and sections; only the id, source and file
    name differ). Kept beside `document_from` so that the two always agree."""
    return Document(
        id=document_id_for(candidate.source),
        source=candidate.source,
        content=stored.content,
        metadata=MappingProxyType({**stored.metadata, "filename": candidate.path.name}),
        sections=stored.sections,
    )


def chunks_within_limit(document: Document, chunker: Chunker, max_chunk_chars: int) -> list[Chunk]:
    """The document's chunks; `IngestLimitExceeded` if one is longer than ``max_chunk_chars``
    (a file that yields a giant chunk is refused rather than stored unsearchably)."""
    return checked_chunks(chunker.chunk(document), max_chunk_chars)


def checked_chunks(chunks: list[Chunk], max_chunk_chars: int) -> list[Chunk]:
    """``chunks``; `IngestLimitExceeded` if one is longer than ``max_chunk_chars``."""
    longest = max((len(c.text) for c in chunks), default=0)
    if longest > max_chunk_chars:
        raise _too_long(longest, max_chunk_chars)
    return chunks


def iter_chunks_within_limit(
    document: Document, chunker: ChunkStream, max_chunk_chars: int
) -> Iterator[Chunk]:
    """`chunks_within_limit`, one chunk at a time: the error comes when the first chunk over
    the limit does (a streamed write that meets it is rolled back whole)."""
    for chunk in chunker.iter_chunks(document):
        if len(chunk.text) > max_chunk_chars:
            raise _too_long(len(chunk.text), max_chunk_chars)
        yield chunk


def _too_long(length: int, max_chunk_chars: int) -> IngestLimitExceeded:
    return IngestLimitExceeded(
        f"a chunk of {length:,} characters exceeds the maximum chunk size of "
        f"{max_chunk_chars:,}; use a smaller --chunk-size"
    )


def failure_reason(error: BaseException) -> str:
    """What a report says about a file that failed: the parser's reason, the OS's message,
    or the error itself."""
    if isinstance(error, ParseError | DocumentRefused):
        return error.reason
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
