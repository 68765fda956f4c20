"""PDF: the text layer of every page (pypdfium2), OCR for pages that have none, headings.

The content is the pages' text joined by a page break (``\\n\\f\\n``); each page is one or more
sections carrying its 1-based page number, split where a heading appears: an outline (bookmark)
entry's title, or without an outline a block set in a larger font (`_pdf_layout`). So chunks
carry both the page and the heading breadcrumb. Tables drawn with rules are written as pipe rows
under their header (`_pdf_tables`), like every other format's tables.

pypdfium2 was chosen by measurement (benchmarks/pdf_libraries.py, docs/pdf.md): several times
faster than pypdf and ~20x faster than pdfminer.six even with the layout reading added here, it
expands ligatures, and it marks a word hyphenated across a line break (U+FFFE), which is joined
back here."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ragwright.errors import ConfigError, MissingDependencyError, OcrError, ParseError
from ragwright.models import ParsedDocument, Section
from ragwright.parsers._pdf_layout import Block, font_headings, read_layout
from ragwright.parsers._pdf_tables import PdfTable, TableFinder
from ragwright.parsers._text import collapse_whitespace, normalize
from ragwright.ports import GrayImage, OcrEngine

if TYPE_CHECKING:
    import pypdfium2

PAGE_BREAK = "\n\f\n"
#: Environment: ``auto`` (OCR when Tesseract is installed), ``off``, or ``tesseract`` (required).
OCR_ENV = "RAGWRIGHT_OCR"
#: Environment: Tesseract language codes joined by ``+`` (default ``eng``).
OCR_LANGUAGES_ENV = "RAGWRIGHT_OCR_LANGUAGES"

OcrChoice = OcrEngine | Literal["auto", "off", "tesseract"]

# pdfium marks a hyphen it removed at a line break with U+FFFE (U+0002 in older builds).
_SOFT_HYPHENS = str.maketrans("", "", "\ufffe\x02")
# Latin ligature glyphs a font may map to one code point ("ﬁ"): spelled out, so "find" matches.
_LIGATURES = str.maketrans(
    {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
    | {"\ufb05": "st", "\ufb06": "st"}
)
# Control characters other than tab, newline and form feed carry no text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_WHITESPACE = re.compile(r"\s")
# What a glyph without a Unicode mapping comes out as: the replacement character or private use.
_UNREADABLE = re.compile("[\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff]")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
#: The most pixels a page is rendered with for OCR: A4 at 300 dpi is 8.7 million. A larger
#: page (a poster, a drawing; PDF allows 200 x 200 inches, 3.6 billion pixels at 300 dpi) is
#: rendered at a lower resolution rather than exhausting memory and losing the whole file.
MAX_OCR_PIXELS = 40_000_000
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class _Heading:
    page: int  # 0-based
    level: int  # 1-based
    title: str


class PdfParser:
    """Reads PDF files: text per page, OCR for scanned pages, headings from the outline (or
    from font sizes when there is none).

    ``ocr`` is an `OcrEngine`, ``"off"``, ``"tesseract"`` (required: a missing install is an
    error) or ``"auto"`` (the default: the ``RAGWRIGHT_OCR`` environment variable, else
    Tesseract when it is installed). ``ocr_languages`` default to ``RAGWRIGHT_OCR_LANGUAGES``
    or ``eng``. A page needs OCR when its text layer has fewer than ``min_text_chars``
    readable characters and it shows an image, or when most of its text is unreadable (glyphs
    without a Unicode mapping); it is rendered at ``ocr_dpi`` for the engine.

    Metadata: ``title``, ``author``, ``pages``, and ``ocr_pages`` / ``ocr_engine`` when OCR read
    some pages. An encrypted PDF that needs a password and a damaged PDF raise `ParseError`.
    """

    extensions: tuple[str, ...] = (".pdf",)
    content_types: tuple[str, ...] = ("application/pdf",)
    magic: tuple[bytes, ...] = (b"%PDF-",)
    #: Readers (PDFium, Acrobat) accept bytes before the header: a BOM, a mail or HTTP leftover.
    magic_within = 1024

    def __init__(
        self,
        *,
        ocr: OcrChoice = "auto",
        ocr_languages: tuple[str, ...] | None = None,
        ocr_dpi: int = 300,
        min_text_chars: int = 16,
    ) -> None:
        # Only looked up: the library loads in the process that parses (the parse worker).
        if importlib.util.find_spec("pypdfium2") is None:
            raise MissingDependencyError("PDF parsing", "pip install 'ragwright[pdf]'")
        self.ocr_dpi = ocr_dpi
        self.min_text_chars = min_text_chars
        self.ocr, self.ocr_unavailable = _ocr_engine(ocr, ocr_languages)

    @property
    def parse_settings(self) -> str:
        """What, beside the bytes, decides the output: installing or changing the OCR engine
        re-reads PDFs at the next ingest."""
        if self.ocr is None:
            return f"ocr: {self.ocr_unavailable}"
        engine = self.ocr
        return f"ocr: {engine.name} {engine.version} {'+'.join(engine.languages)} {self.ocr_dpi}"

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        import pypdfium2 as pdfium

        document = _open(data, source)
        tables = TableFinder(data)
        try:
            pages, blocks, ocr_pages, unread, warnings = self._read_pages(document, tables)
            headings = list(_outline(document))
            title, headings = (None, headings) if headings else _split_title(_by_font_size(blocks))
            info = document.get_metadata_dict(skip_empty=True)
        except pdfium.PdfiumError as error:
            raise ParseError(source, f"damaged PDF ({error})") from error
        finally:
            tables.close()
            document.close()
        if unread and not any(text.strip() for text in pages):
            raise ParseError(source, _no_text_reason(len(pages), self.ocr_unavailable))
        content, sections = _assemble(pages, headings)
        metadata: dict[str, Any] = {"pages": len(pages)}
        for key in ("Title", "Author"):
            if value := collapse_whitespace(info.get(key, "")):
                metadata[key.lower()] = value
        if "title" not in metadata and (title or headings):
            metadata["title"] = title or headings[0].title
        if ocr_pages and self.ocr is not None:
            metadata["ocr_pages"] = ocr_pages
            metadata["ocr_engine"] = f"{self.ocr.name} {self.ocr.version}"
        if unread:
            warnings.append(_unread_warning(unread, self.ocr_unavailable))
        if tables.failed:  # one line for the file, however many pages: the cause is usually one
            numbers = ", ".join(str(number) for number, _ in tables.failed)
            where = f"page{'s' if len(tables.failed) > 1 else ''} {numbers}"
            warnings.append(
                f"the ruled tables on {where} could not be read ({tables.failed[0][1]}); "
                "their rows are kept as plain text, without column names"
            )
        return ParsedDocument(content, sections, metadata, "application/pdf", tuple(warnings))

    def _read_pages(
        self, document: pypdfium2.PdfDocument, tables: TableFinder
    ) -> tuple[list[str], list[list[Block]], list[int], list[int], list[str]]:
        """Each page's text (ruled tables as pipe rows) and text-layer blocks; the pages read
        by OCR, those left unread, and warnings."""
        pages: list[str] = []
        layouts: list[list[Block]] = []
        ocr_pages: list[int] = []
        unread: list[int] = []
        warnings: list[str] = []
        for index in range(len(document)):
            page = document[index]
            try:
                raw, blocks = _text_layer(page, tables.tables(index, page))
                text = _clean(raw)
                if self._needs_ocr(page, text):
                    blocks = []
                    if self.ocr is None:
                        unread.append(index + 1)
                    else:
                        try:
                            text = _clean(self.ocr.recognize(_render(page, self.ocr_dpi)))
                            ocr_pages.append(index + 1)
                        except OcrError as error:
                            warnings.append(f"page {index + 1} could not be read by OCR: {error}")
                pages.append(text)
                layouts.append(blocks)
            finally:
                page.close()
        return pages, layouts, ocr_pages, unread, warnings

    def _needs_ocr(self, page: pypdfium2.PdfPage, text: str) -> bool:
        """Whether a page's text layer is unusable: too few readable characters, and either
        an image on the page (a scan) or mostly unreadable ones (glyphs without a Unicode
        mapping come out as U+FFFD or private-use code points)."""
        visible = len(text) - len(_WHITESPACE.findall(text))
        readable = visible - len(_UNREADABLE.findall(text))
        if readable >= self.min_text_chars and 2 * readable >= visible:
            return False
        if readable < visible / 2:
            return True
        import pypdfium2.raw as pdfium_c

        # Only a page that shows an image can be a scan; a blank page costs no OCR.
        images = page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3)
        return next(iter(images), None) is not None


def _ocr_engine(
    choice: OcrChoice, languages: tuple[str, ...] | None
) -> tuple[OcrEngine | None, str]:
    """The engine, or None and why there is none ("disabled", "not installed")."""
    if not isinstance(choice, str):
        return choice, ""
    if choice == "auto":
        choice = os.environ.get(OCR_ENV, "auto").strip().lower() or "auto"  # type: ignore[assignment]
    if choice in ("off", "0", "false", "no", "none"):
        return None, f"disabled ({OCR_ENV}=off or ocr='off')"
    if choice not in ("auto", "tesseract"):
        raise ConfigError(f"unknown OCR choice {choice!r}: use auto, off or tesseract ({OCR_ENV})")
    from ragwright.ocr.tesseract import INSTALL_HINT, TesseractOcr

    if languages is None:
        raw = os.environ.get(OCR_LANGUAGES_ENV, "eng")
        languages = tuple(code for code in raw.replace(",", "+").split("+") if code.strip())
    if choice == "auto" and not TesseractOcr.available():
        return None, f"unavailable: Tesseract is not installed ({INSTALL_HINT})"
    return TesseractOcr(languages=tuple(code.strip() for code in languages)), ""


def _open(data: bytes, source: str) -> pypdfium2.PdfDocument:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        code = getattr(error, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            reason = "the PDF is encrypted and needs a password to open"
        elif code == pdfium_c.FPDF_ERR_SECURITY:
            reason = "the PDF uses an unsupported security handler (encryption)"
        else:
            reason = f"damaged or not a PDF ({error})"
        raise ParseError(source, reason) from error


def _text_layer(page: pypdfium2.PdfPage, tables: list[PdfTable]) -> tuple[str, list[Block]]:
    textpage = page.get_textpage()
    try:
        return read_layout(textpage, tables)
    finally:
        textpage.close()


def _clean(text: str) -> str:
    """Normalized page text: soft hyphens joined, ligatures spelled out, no control
    characters, no trailing spaces, at most one blank line in a row, no blank ends."""
    text = normalize(text.translate(_SOFT_HYPHENS).translate(_LIGATURES))
    text = _CONTROL.sub("", text.replace("\f", "\n"))
    text = _TRAILING_SPACE.sub("\n", text)
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _render(page: pypdfium2.PdfPage, dpi: int) -> GrayImage:
    page_width, page_height = page.get_size()  # points, 1/72 inch
    dpi = min(dpi, max(1, int(72 * (MAX_OCR_PIXELS / max(page_width * page_height, 1.0)) ** 0.5)))
    bitmap = page.render(scale=dpi / 72, grayscale=True)
    try:
        width, height, stride = bitmap.width, bitmap.height, bitmap.stride
        raw = bytes(bitmap.buffer)
        if stride != width:  # drop the padding at the end of each row
            raw = b"".join(raw[row * stride : row * stride + width] for row in range(height))
        return GrayImage(width, height, raw, dpi)
    finally:
        bitmap.close()


def _outline(document: pypdfium2.PdfDocument) -> Iterator[_Heading]:
    """Outline entries that point at a page, in outline order (max depth 16; pypdfium2 stops
    at cycles)."""
    for bookmark in document.get_toc(max_depth=16):
        title = collapse_whitespace(bookmark.get_title() or "")
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if title and index is not None and 0 <= index < len(document):
            yield _Heading(index, bookmark.level + 1, title)


def _by_font_size(pages: list[list[Block]]) -> list[_Heading]:
    """Headings for a PDF without an outline, from its font sizes."""
    found = (
        _Heading(heading.page, heading.level, collapse_whitespace(_clean(heading.text)))
        for heading in font_headings(pages)
    )
    return [heading for heading in found if heading.title]


def _split_title(headings: list[_Heading]) -> tuple[str | None, list[_Heading]]:
    """The document's title and the font-size headings less it. The title is the largest
    type, used once, first, on the first page, above headings of its own: it names the
    document (its ``title`` when the PDF records none), not a section, so it does not start
    every breadcrumb."""
    if len(headings) < 2 or headings[0].page != 0:
        return None, headings
    first, rest = headings[0], headings[1:]
    if any(heading.level <= first.level for heading in rest):
        return None, headings
    return first.title, rest


def _assemble(pages: list[str], headings: list[_Heading]) -> tuple[str, tuple[Section, ...]]:
    """The content (pages joined by a page break) and its sections: contiguous, one or more
    per page, split where an outline title is found in the page's text (or at the top of the
    page when the title is not in the text)."""
    starts, position = [], 0
    for text in pages:
        starts.append(position)
        position += len(text) + len(PAGE_BREAK)
    content = PAGE_BREAK.join(pages)
    by_page: dict[int, list[_Heading]] = {}
    for heading in headings:
        by_page.setdefault(heading.page, []).append(heading)
    sections: list[Section] = []
    stack: list[_Heading] = []
    for number, (text, start) in enumerate(zip(pages, starts, strict=True), start=1):
        end = start + len(text) + (len(PAGE_BREAK) if number < len(pages) else 0)
        cuts: list[tuple[int, _Heading]] = []
        cursor = 0
        for heading in by_page.get(number - 1, []):
            found = _find_title(text, heading.title, cursor)
            cuts.append((start + (found[0] if found else cursor), heading))
            cursor = found[1] if found else cursor
        span_start = start
        for offset, heading in cuts:
            if offset > span_start:
                sections.append(_section(span_start, offset, stack, number))
                span_start = offset
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            stack.append(heading)
        if end > span_start or not sections:
            sections.append(_section(span_start, end, stack, number))
    return content, tuple(section for section in sections if section.char_end > section.char_start)


def _find_title(text: str, title: str, cursor: int) -> tuple[int, int] | None:
    """Where an outline title is in a page's text from ``cursor`` on, ignoring case and
    spacing; None when the page does not show it."""
    pattern = r"\s+".join(re.escape(word) for word in title.split())
    match = re.compile(pattern, re.IGNORECASE).search(text, cursor)
    return match.span() if match else None


def _section(start: int, end: int, stack: list[_Heading], page: int) -> Section:
    path = tuple(heading.title for heading in stack)
    level = stack[-1].level if stack else 0
    return Section(start, end, heading_path=path, level=level, page=page)


def _no_text_reason(pages: int, ocr_unavailable: str) -> str:
    what = "its page has" if pages == 1 else f"none of its {pages} pages has"
    return f"{what} a text layer (a scan?) and OCR is {ocr_unavailable}"


def _unread_warning(unread: list[int], ocr_unavailable: str) -> str:
    listed = ", ".join(str(number) for number in unread[:20])
    more = f" and {len(unread) - 20} more" if len(unread) > 20 else ""
    pages = f"page {listed} has" if len(unread) == 1 else f"pages {listed}{more} have"
    return f"{pages} no text layer and went unread: OCR is {ocr_unavailable}"
