"""Content built from a structured file (Office, spreadsheets, JSON, RTF), with exact sections.

The text of these formats is not in the file as such: it is written here, block by block, and
each heading's offset is recorded as it is written, so section offsets are exact by
construction. Blocks are separated by a blank line, list items and table rows by a line break.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragwright.models import ParsedDocument, Section
from ragwright.parsers._tables import table_lines
from ragwright.parsers._text import Heading, collapse_whitespace, normalize, sections_from_headings

# Control characters other than tab and line feed (vertical tab and form feed are line breaks
# in Office text; the rest are noise that would only confuse tokenizers).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"[\x0b\x0c\u2028\u2029]")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


def clean(text: str) -> str:
    """Normalized text (see `normalize`) with Office line breaks as ``\\n``, control characters
    removed and trailing spaces stripped from each line."""
    text = _CONTROL.sub("", _LINE_BREAKS.sub("\n", normalize(text)))
    return _TRAILING_SPACE.sub("\n", text).strip()


@dataclass(frozen=True, slots=True)
class _Mark:
    heading: Heading
    page: int | None
    metadata: dict[str, Any]


class TextBuilder:
    """Appends headings, paragraphs, lines and tables; `build` returns the parsed document."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._marks: list[_Mark] = []
        self._owed = ""  # the separator owed before the next text
        self._in_lines = False  # the last thing written was a `line`

    @property
    def empty(self) -> bool:
        return self._length == 0

    def heading(
        self,
        text: str,
        level: int,
        page: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """A heading line that opens a section (``level`` 1 is the outermost), with the
        section's page and metadata."""
        title = collapse_whitespace(clean(text))
        if not title:
            return
        self._separate("\n\n")
        self._pay_separator()  # the heading's section starts at its text
        self._marks.append(_Mark(Heading(self._length, level, title), page, metadata or {}))
        self._write(title)

    def paragraph(self, text: str) -> None:
        """A block of text, separated from what came before by a blank line."""
        self._block(clean(text), "\n\n")

    def line(self, text: str) -> None:
        """A line (a list item, a row) right under the previous one; the first line of a run
        is separated by a blank line like a paragraph."""
        text = clean(text)
        if text:
            self._block(text, "\n" if self._in_lines else "\n\n")
            self._in_lines = True

    def table(self, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
        """A pipe table (see `ragwright.parsers._tables`) as its own block."""
        self._separate("\n\n")
        for number, line in enumerate(table_lines(header, rows)):
            if number:
                self._separate("\n")
            self._write(_CONTROL.sub("", normalize(line)))
        self._separate("\n\n")

    def break_block(self) -> None:
        """End a run of lines: whatever comes next starts a new block."""
        self._in_lines = False
        if self._length:
            self._owed = "\n\n"

    def build(
        self, metadata: dict[str, Any], content_type: str, warnings: tuple[str, ...] = ()
    ) -> ParsedDocument:
        content = "".join(self._parts)
        sections = sections_from_headings(content, (mark.heading for mark in self._marks))
        marks = {mark.heading.offset: mark for mark in self._marks}
        return ParsedDocument(
            content=content,
            sections=tuple(_marked(section, marks.get(section.char_start)) for section in sections),
            metadata=metadata,
            content_type=content_type,
            warnings=warnings,
        )

    def _block(self, text: str, separator: str) -> None:
        if text:
            self._separate(separator)
            self._write(text)

    def _separate(self, separator: str) -> None:
        # The stronger separator wins; nothing is owed at the very start.
        if self._length and len(separator) > len(self._owed):
            self._owed = separator

    def _pay_separator(self) -> None:
        if self._owed:
            self._parts.append(self._owed)
            self._length += len(self._owed)
            self._owed = ""

    def _write(self, text: str) -> None:
        self._in_lines = False  # `line` sets it again after writing
        self._pay_separator()
        self._parts.append(text)
        self._length += len(text)


def _marked(section: Section, mark: _Mark | None) -> Section:
    if mark is None:
        return section
    return replace(section, page=mark.page, metadata=mark.metadata)
