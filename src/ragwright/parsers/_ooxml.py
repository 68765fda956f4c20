"""Checks on Office Open XML packages (DOCX, PPTX, XLSX) before any library reads them.

An OOXML file is a zip archive of XML parts. A hostile one can be a zip bomb (a few KB that
inflate to gigabytes), carry XML entity declarations that expand exponentially ("billion
laughs") or name external files, or embed huge media. So, before python-docx, python-pptx or
openpyxl see the bytes:

- the bytes must be a zip archive (an encrypted Office file or a legacy ``.doc``/``.xls``/``.ppt``
  is a compound file, named as such in the error), with ``[Content_Types].xml``;
- the central directory is checked against `ArchiveLimits`: entry count, each entry's
  uncompressed size and compression ratio, and the total. Python's ``zipfile`` never inflates an
  entry past its declared size (and fails the CRC if the data says otherwise), so checking the
  declared sizes bounds what any reader can inflate;
- no XML part may declare a DTD (``<!DOCTYPE``): OOXML forbids them, and without one no entity
  can be declared, so entity expansion and external entities are impossible;
- media and embedded objects are never inflated: `sanitized_package` rebuilds the archive with
  them emptied for the libraries that load every part (python-docx, python-pptx); openpyxl in
  read-only mode never opens them.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from ragwright.errors import IngestLimitExceeded, ParseError

MB = 1024 * 1024
#: How far into an XML part its root element must start (the prolog is checked up to there).
PROLOG_BYTES = 64 * 1024
_ZIP_MAGIC = b"PK\x03\x04"
_COMPOUND_FILE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:")


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Limits on an OOXML archive, from its directory; sizes are uncompressed bytes.

    ``max_ratio`` applies to parts larger than ``ratio_floor`` (tiny parts compress well and
    harm nobody); real XML compresses 5–30x, a deflate bomb up to about 1000x.
    """

    max_entries: int = 10_000
    max_part_size: int = 256 * MB
    max_total_size: int = 1024 * MB
    max_ratio: int = 200
    ratio_floor: int = 1 * MB


DEFAULT_LIMITS = ArchiveLimits()


def open_package(
    data: bytes, source: str, limits: ArchiveLimits = DEFAULT_LIMITS
) -> zipfile.ZipFile:
    """The archive, once its directory passes `limits` and every XML part's prolog is clean."""
    if data.startswith(_COMPOUND_FILE_MAGIC):
        raise ParseError(
            source,
            "this is a compound file (a password-protected Office file, or the legacy binary "
            ".doc/.xls/.ppt format), not Office Open XML; remove the password or save it as "
            ".docx/.xlsx/.pptx",
        )
    if not data.startswith(_ZIP_MAGIC):
        raise ParseError(source, "not an Office Open XML file (the bytes are not a zip archive)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        _check_directory(archive, source, limits)
        for info in _xml_parts(archive):
            with archive.open(info) as part:
                check_prolog(part.read(PROLOG_BYTES), source, info.filename)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as error:
        raise ParseError(source, f"corrupt zip archive: {error}") from error
    return archive


def sanitized_package(
    data: bytes, source: str, limits: ArchiveLimits = DEFAULT_LIMITS
) -> io.BytesIO:
    """A checked copy of the package holding its XML parts, with every other part (images,
    embedded objects, fonts, thumbnails) present but empty, for readers that load every part."""
    archive = open_package(data, source, limits)
    copy = io.BytesIO()
    try:
        with archive, zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as out:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                content = archive.read(info) if _is_xml(info) else b""
                out.writestr(info.filename, content)
    except (zipfile.BadZipFile, EOFError, ValueError) as error:
        raise ParseError(source, f"corrupt zip archive: {error}") from error
    copy.seek(0)
    return copy


def check_prolog(head: bytes, source: str, part: str) -> None:
    """Refuse an XML part whose prolog declares a DTD, or whose root element does not start
    within `PROLOG_BYTES` (a prolog padded to hide a DTD from this check)."""
    text = _decode_head(head)
    position = 0
    while position < len(text):
        if text[position].isspace():
            position += 1
        elif text.startswith("<?", position):
            position = _skip_past(text, "?>", position, source, part)
        elif text.startswith("<!--", position):
            position = _skip_past(text, "-->", position, source, part)
        elif text.startswith("<!", position):
            raise ParseError(
                source, f"{part} declares a DTD, which OOXML forbids (entity expansion refused)"
            )
        elif text.startswith("<", position) and text[position + 1 : position + 2] in _NAME_START:
            return  # the root element: the prolog is over
        else:
            break
    raise ParseError(source, f"{part} has no XML root element in its first {len(head):,} bytes")


def _check_directory(archive: zipfile.ZipFile, source: str, limits: ArchiveLimits) -> None:
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        raise IngestLimitExceeded(
            f"the archive has {len(infos):,} entries, over the limit of "
            f"{limits.max_entries:,} (max_entries)"
        )
    if "[Content_Types].xml" not in archive.NameToInfo:
        raise ParseError(source, "a zip archive, but not an Office Open XML package")
    total = 0
    # Every entry, not only the XML parts: a reader may follow a relationship to a part with
    # any name, and a bomb could be named like an image. Real media compresses barely at all.
    for info in infos:
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            raise ParseError(source, f"the zip entry {info.filename!r} is encrypted")
        if info.file_size > limits.max_part_size:
            raise IngestLimitExceeded(
                f"{info.filename} inflates to {info.file_size / MB:,.1f} MB, over the "
                f"per-part limit of {limits.max_part_size / MB:,.0f} MB (max_part_size)"
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > limits.ratio_floor and ratio > limits.max_ratio:
            raise IngestLimitExceeded(
                f"{info.filename} is compressed {ratio:,.0f}:1, over the limit of "
                f"{limits.max_ratio}:1 (max_ratio; a zip bomb?)"
            )
        total += info.file_size
        if total > limits.max_total_size:
            raise IngestLimitExceeded(
                f"the archive inflates to over {limits.max_total_size / MB:,.0f} MB "
                "in all (max_total_size)"
            )


def _xml_parts(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [info for info in archive.infolist() if _is_xml(info)]


def _is_xml(info: zipfile.ZipInfo) -> bool:
    return not info.is_dir() and info.filename.lower().endswith(_XML_SUFFIXES)


def _decode_head(head: bytes) -> str:
    """The start of an XML part as text, enough to read its markup: UTF-16 by BOM or by the
    zero bytes around ``<``, else byte-for-byte (markup is ASCII in UTF-8 and its kin)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head.decode("utf-16", errors="replace")
    if head.startswith(b"<\x00"):
        return head.decode("utf-16-le", errors="replace")
    if head.startswith(b"\x00<"):
        return head.decode("utf-16-be", errors="replace")
    return head.removeprefix(b"\xef\xbb\xbf").decode("latin-1")


def _skip_past(text: str, end: str, position: int, source: str, part: str) -> int:
    found = text.find(end, position)
    if found < 0:
        raise ParseError(source, f"{part} has an XML prolog too long or unterminated")
    return found + len(end)
