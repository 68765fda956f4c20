"""Shared by the text-like parsers: bytes → normalized text, and headings → sections.

Normalization is deliberately small (line endings and Unicode NFC only): the normalized text is
what the index stores and what every citation offset points into, so it must stay recognisably
the user's text.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from ragwright.errors import ParseError
from ragwright.models import METADATA_HEADER, ParsedDocument, Section

#: How much of the file is checked for NUL bytes and control characters: text has neither.
BINARY_SNIFF_BYTES = 8192
#: Text whose start has more than this share of control characters (and more than
#: `MIN_CONTROLS` of them: a few stray bytes do not make a file binary) is taken for binary
#: data. Random bytes decode to about 10% (cp1252) or 22% (latin-1); white space and ESC
#: (coloured logs) do not count.
MAX_CONTROL_SHARE = 0.05
MIN_CONTROLS = 8
_CONTROL = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")

# Longest first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

# Browsers read these labels as windows-1252 (WHATWG Encoding), and so do we: real files that
# say "iso-8859-1" almost always contain cp1252 quotes and dashes.
_CP1252_ALIASES = frozenset({"ascii", "us-ascii", "iso-8859-1", "iso8859-1", "latin-1", "latin1"})


class Decoded(NamedTuple):
    """Decoded text, and a warning when its encoding was a guess (not UTF-8, not declared)."""

    text: str
    warnings: tuple[str, ...] = ()


def decode(data: bytes, source: str, declared: str | None = None) -> Decoded:
    """Decode file bytes: BOM, then a declared charset, then UTF-8, then cp1252, then latin-1.

    Raises ``ParseError`` for binary data: NUL bytes near the start without a UTF-16/32 BOM, or
    a start that decodes to more than `MAX_CONTROL_SHARE` control characters.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            # The BOM states the encoding; a stray bad sequence should not lose the whole file.
            return _checked(Decoded(data.decode(encoding, errors="replace")), source)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ParseError(source, "looks like binary data (NUL bytes), not text")
    candidates = _candidates(declared)
    for encoding in [*candidates, "latin-1"]:  # latin-1 is total: every byte is a code point
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding in (candidates[0], "utf-8"):
            return _checked(Decoded(text), source)
        guess = f"not valid UTF-8: read as {encoding}, a guess; check the text, or save it as UTF-8"
        return _checked(Decoded(text, (guess,)), source)
    raise AssertionError("unreachable: latin-1 decodes any bytes")  # pragma: no cover


def _checked(decoded: Decoded, source: str) -> Decoded:
    sample = decoded.text[:BINARY_SNIFF_BYTES]
    controls = len(_CONTROL.findall(sample))
    if controls > max(MAX_CONTROL_SHARE * len(sample), MIN_CONTROLS):
        share = f"{controls / len(sample):.0%}"
        raise ParseError(source, f"looks like binary data ({share} control characters), not text")
    return decoded


def _candidates(declared: str | None) -> list[str]:
    encodings = ["utf-8", "cp1252"]
    if declared:
        label = declared.strip().lower()
        try:
            name = "cp1252" if label in _CP1252_ALIASES else codecs.lookup(label).name
        except LookupError:
            return encodings  # an unknown label is a hint we cannot use
        encodings.insert(0, name)
    return encodings


def normalize(text: str) -> str:
    """``\\r\\n`` and ``\\r`` → ``\\n``, Unicode NFC; nothing else (tabs and spacing are kept)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def read_text(data: bytes, source: str, declared: str | None = None) -> Decoded:
    """Decode and normalize: the text a parser stores as ``content``."""
    text, warnings = decode(data, source, declared)
    return Decoded(normalize(text), warnings)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace → one space, ends stripped (for titles and heading text)."""
    return " ".join(text.split())


class Heading(NamedTuple):
    """A heading found in ``content``: where its section starts, its level and plain text."""

    offset: int
    level: int
    text: str


def sections_from_headings(
    content: str, headings: Iterable[Heading], start: int = 0
) -> tuple[Section, ...]:
    """Sections spanning heading to next heading, each with the path of its enclosing headings.

    Text from ``start`` (where a metadata header ends) to the first heading becomes a section
    with an empty path unless it is blank. A document without headings is one section.
    Sections are contiguous and end at the end.
    """
    ordered = sorted(headings, key=lambda heading: heading.offset)
    if not ordered:
        return (Section(start, len(content)),) if content[start:] else ()
    sections: list[Section] = []
    if content[start : ordered[0].offset].strip():
        sections.append(Section(start, ordered[0].offset))
    ends = [heading.offset for heading in ordered[1:]] + [len(content)]
    stack: list[Heading] = []
    for heading, end in zip(ordered, ends, strict=True):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        path = tuple(item.text for item in stack)
        sections.append(Section(heading.offset, end, heading_path=path, level=heading.level))
    return tuple(sections)


def first_title(headings: Iterable[Heading]) -> str | None:
    """The text of the first level-1 heading, if any."""
    return next((heading.text for heading in headings if heading.level == 1), None)


def headed_document(
    content: str,
    headings: list[Heading],
    metadata: dict[str, Any],
    content_type: str,
    warnings: tuple[str, ...] = (),
    header_end: int = 0,
) -> ParsedDocument:
    """A parsed document whose sections follow its headings; the title is the metadata's
    own, else the first level-1 heading. ``content[:header_end]`` is the file's metadata
    header (front matter), a section of its own marked `METADATA_HEADER`."""
    title = metadata.get("title") or first_title(headings)
    if title:
        metadata["title"] = title
    header = (Section(0, header_end, metadata={METADATA_HEADER: True}),) if header_end else ()
    return ParsedDocument(
        content=content,
        sections=header + sections_from_headings(content, headings, header_end),
        metadata=metadata,
        content_type=content_type,
        warnings=warnings,
    )


#: A line and its ending, as universal newlines split (``\r\n``, ``\r`` or ``\n``), or the
#: last line without one; and the same with ``\n`` alone ending a line.
_UNIVERSAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_NEWLINE_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def iter_lines(text: str, *, universal: bool = True) -> Iterator[str]:
    """The lines of ``text`` with their endings, one at a time, as `io.StringIO` with
    ``newline=""`` (``universal``) or ``newline="\n"`` reads them: StringIO copies the whole
    text first, at four bytes a character (32 MB for an 8 MB file)."""
    pattern = _UNIVERSAL_LINE if universal else _NEWLINE_LINE
    return (match.group() for match in pattern.finditer(text))
