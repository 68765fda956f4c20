"""Rich Text Format (.rtf): the text, one paragraph per ``\\par``, with title and author;
tables as pipe rows under their first row.

The control words are interpreted by ``striprtf`` (destinations such as font tables, pictures
and embedded objects skipped; ``\\'hh`` and ``\\uN`` escapes decoded in the document's code
page). It reads anything, so the structure is checked here first: a file that does not open
with ``{\\rtf`` or whose groups do not balance is a `ParseError`, not garbage text.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder
from ragwright.parsers._office import require_office

_CODE_PAGE = re.compile(rb"\\ansicpg(\d{3,5})")
_INFO_FIELD = re.compile(rb"\{\\(title|author|subject|keywords)\s+([^{}]*)\}")
_GROUP_TOKENS = re.compile(rb"\\[\\{}]|[{}]|\\bin(\d+) ?")


class RtfParser:
    """Reads RTF. Metadata: ``title``, ``author``, ``subject`` and ``keywords`` from the
    document's info group, when present."""

    extensions: tuple[str, ...] = (".rtf",)
    content_types: tuple[str, ...] = ("application/rtf", "text/rtf")

    def __init__(self) -> None:
        require_office("striprtf", "the RTF parser")

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        from striprtf import striprtf

        rtf_to_text: Callable[..., str] = striprtf.rtf_to_text  # the library has no types
        data = data.removeprefix(codecs.BOM_UTF8).lstrip()
        if not data.startswith(b"{\\rtf"):
            raise ParseError(source, "not an RTF file (it does not start with {\\rtf)")
        _check_groups(data, source)
        encoding = _encoding(data)
        try:
            text = rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
        except (ValueError, IndexError, LookupError) as error:
            raise ParseError(source, f"malformed RTF: {error}") from error
        builder = TextBuilder()
        rows: list[list[str]] = []
        for line in text.split("\n"):
            if line.rstrip().endswith("|"):  # a table row: striprtf ends each cell with "|"
                rows.append(line.rstrip().removesuffix("|").split("|"))
                continue
            if rows:
                builder.table(rows[0], rows[1:])
                rows = []
            builder.paragraph(line)
        if rows:
            builder.table(rows[0], rows[1:])
        metadata = {
            key.decode(): value
            for key, raw in _INFO_FIELD.findall(data)
            if (value := " ".join(rtf_to_text("{\\rtf1 " + raw.decode("latin-1") + "}").split()))
        }
        return builder.build(metadata, "application/rtf")


def _check_groups(data: bytes, source: str) -> None:
    """The braces balance and the outermost group closes at the end (escaped braces and
    ``\\binN`` binary data skipped)."""
    depth = 0
    position = 0
    while match := _GROUP_TOKENS.search(data, position):
        token, position = match.group(), match.end()
        if match.group(1) is not None:
            position += int(match.group(1))  # raw bytes that may hold braces
        elif token == b"{":
            depth += 1
        elif token == b"}":
            depth -= 1
            if depth == 0 and data[position:].strip(b"\x00 \t\r\n"):
                raise ParseError(source, "malformed RTF: text after the document's last brace")
    if depth:
        raise ParseError(source, f"malformed RTF: {depth} group(s) never closed (truncated?)")


def _encoding(data: bytes) -> str:
    match = _CODE_PAGE.search(data[:4096])
    if match:
        name = f"cp{int(match.group(1))}"
        try:
            return codecs.lookup(name).name
        except LookupError:
            pass
    return "cp1252"
