"""Plain text: the whole decoded file is one section."""

from __future__ import annotations

from ragwright.models import ParsedDocument
from ragwright.parsers._text import read_text, sections_from_headings


class TextParser:
    """Reads ``.txt`` files: decoded, normalized, one heading-less section."""

    extensions: tuple[str, ...] = (".txt", ".text")
    content_types: tuple[str, ...] = ("text/plain",)

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        content, warnings = read_text(data, source)
        return ParsedDocument(
            content=content,
            sections=sections_from_headings(content, ()),
            content_type="text/plain",
            warnings=warnings,
        )
