"""Document chunkers ahead of the parsers: a format a `DocumentChunker` claims is read by it,
text and chunks in one pass; every other file goes the parser + chunker way.

Document chunkers register in the ``ragwright.document_chunkers`` entry-point group, the same
door as parsers. Each is wrapped in a `FusedParser`, a `Parser` whose result (`FusedParse`)
also carries the chunk spans, so the rest of ingest (the parse worker and its limits, the
fingerprint, the write) treats it like any parser's. `fused_chunks` turns the spans into
chunks of the stored text, checking that each span lies inside it: the stored document text
is what the chunks' offsets index into, exactly as for every chunker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from ragwright._plugins import installed_entry_points
from ragwright.chunkers.context_headers import headed
from ragwright.errors import ParseError, RegistryError
from ragwright.models import Chunk, Document, ParsedDocument, chunk_id_for
from ragwright.ports import ChunkedDocument, Chunker, ChunkSpan, DocumentChunker, Parser

ENTRY_POINT_GROUP = "ragwright.document_chunkers"


@dataclass(frozen=True, slots=True)
class FusedParse(ParsedDocument):
    """A parse that came with its chunks (see `fused_chunks`)."""

    spans: tuple[ChunkSpan, ...] = ()


class FusedParser:
    """A `DocumentChunker` as a `Parser`: its ``parse`` returns a `FusedParse`."""

    def __init__(self, chunker: DocumentChunker) -> None:
        self.chunker = chunker
        self.extensions = tuple(ext.lower() for ext in chunker.extensions)
        self.content_types = tuple(kind.lower() for kind in chunker.content_types)
        # Part of each file's fingerprint: another document chunker re-reads the file.
        self.parse_settings = f"document chunker {type(chunker).__module__}.{chunker!r}"

    def parse(self, data: bytes, source: str) -> FusedParse:
        made = self.chunker.parse_chunks(data, source)
        if not isinstance(made, ChunkedDocument):
            raise ParseError(
                source, f"the document chunker {self.chunker!r} returned no ChunkedDocument"
            )
        parsed = made.document
        spans = tuple(made.spans)
        _check_spans(source, parsed.content, spans)
        return FusedParse(
            content=parsed.content,
            sections=parsed.sections,
            metadata=parsed.metadata,
            content_type=parsed.content_type,
            warnings=parsed.warnings,
            spans=spans,
        )

    def __repr__(self) -> str:
        return f"FusedParser({self.chunker!r})"


def fused_chunks(
    document: Document, parsed: ParsedDocument, chunker: Chunker
) -> list[Chunk] | None:
    """The chunks a document chunker made for ``document`` (made from ``parsed``), with the
    context headers the configured ``chunker`` gives (see `context_headers.headed`), or None
    when a parser read it (``chunker`` decides)."""
    if not isinstance(parsed, FusedParse):
        return None
    chunks = []
    for index, span in enumerate(parsed.spans):
        text = document.content[span.char_start : span.char_end]
        chunks.append(
            Chunk(
                id=chunk_id_for(document.id, span.char_start, text),
                document_id=document.id,
                index=index,
                text=text,
                char_start=span.char_start,
                char_end=span.char_end,
                metadata=MappingProxyType(dict(span.metadata)),
            )
        )
    return headed(chunker, document, chunks)


def _check_spans(source: str, content: str, spans: tuple[ChunkSpan, ...]) -> None:
    """Every span non-empty and inside the text, in document order (chunk indexes follow it)."""
    previous = -1
    for span in spans:
        start, end = span.char_start, span.char_end
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
            raise ParseError(source, f"the document chunker made an empty span {start}:{end}")
        if end > len(content):
            raise ParseError(
                source,
                f"the document chunker made a span {start}:{end} past the end of its text "
                f"({len(content)} characters)",
            )
        if start < previous:
            raise ParseError(source, "the document chunker's spans are not in document order")
        previous = start


class ParserLookup(Protocol):
    """What ingest asks of its parsers (`ragwright.pipeline.ingest.ingestor.ParserLookup`)."""

    def parser_for(self, path: str | Path, head: bytes | None = None) -> Parser: ...

    def supports(self, path: str | Path) -> bool: ...

    @property
    def extensions(self) -> tuple[str, ...]: ...


class FusedFirst:
    """A parser lookup that offers the document chunkers' formats first, then ``parsers``'."""

    def __init__(self, chunkers: Iterable[DocumentChunker], parsers: ParserLookup) -> None:
        self.parsers = parsers
        self._by_extension: dict[str, FusedParser] = {}
        for chunker in chunkers:
            fused = FusedParser(chunker)  # one per chunker: the parse worker keys parsers by id
            for extension in fused.extensions:
                holder = self._by_extension.get(extension)
                if holder is not None:
                    raise RegistryError(
                        f"document chunkers {holder.chunker!r} and {chunker!r} both claim "
                        f"{extension!r}"
                    )
                self._by_extension[extension] = fused

    @classmethod
    def from_entry_points(
        cls, parsers: ParserLookup, group: str = ENTRY_POINT_GROUP
    ) -> ParserLookup:
        """``parsers`` behind every installed document chunker (``parsers`` itself when none
        is installed)."""
        chunkers = []
        for point in sorted(installed_entry_points(group), key=lambda point: point.name):
            try:
                chunkers.append(point.load()())
            except Exception as exc:  # a broken plugin must say which one it is
                raise RegistryError(
                    f"document chunker plugin {point.name!r} ({point.value}) failed to load: {exc}"
                ) from exc
        return cls(chunkers, parsers) if chunkers else parsers

    def parser_for(self, path: str | Path, head: bytes | None = None) -> Parser:
        fused = self._lookup(path)
        return fused if fused is not None else self.parsers.parser_for(path, head)

    def supports(self, path: str | Path) -> bool:
        return self._lookup(path) is not None or self.parsers.supports(path)

    @property
    def extensions(self) -> tuple[str, ...]:
        return tuple(sorted({*self._by_extension, *self.parsers.extensions}))

    def _lookup(self, path: str | Path) -> FusedParser | None:
        suffixes = [suffix.lower() for suffix in Path(path).suffixes]
        for index in range(len(suffixes)):
            fused = self._by_extension.get("".join(suffixes[index:]))
            if fused is not None:
                return fused
        return None
