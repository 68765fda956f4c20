"""Ruled tables on PDF pages, as pipe rows.

A PDF has no tables, only text and lines drawn near it. Tables drawn with rules (cell borders)
are found by pdfplumber's line-intersection analysis, the part of pdfplumber that PDFium has no
counterpart for. pdfplumber (pdfminer.six underneath) is ~70x slower than reading the text
layer with PDFium, so it only looks at pages that are worth it: pages whose drawn paths give at
least two horizontal and two vertical edges (`has_rules`, a cheap count through PDFium). A page
of plain text, or one with only a rule under its header, costs nothing more.

A table found is written with the shared pipe-row rendering (`ragwright.parsers._tables`), its
first row as the header, so the chunkers keep every row with it. Tables without rules (columns
aligned by whitespace alone) are not detected: their text stays as PDFium reads it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragwright.parsers._tables import column_names, table_lines

if TYPE_CHECKING:
    import pypdfium2

# A drawn path thinner than this (points) is a rule; longer than _MIN_EDGE, an edge.
_RULE_THICKNESS = 3.0
_MIN_EDGE = 8.0


@dataclass(frozen=True, slots=True)
class PdfTable:
    """A table's box in PDF user space (origin bottom left) and its pipe-row lines."""

    left: float
    bottom: float
    right: float
    top: float
    lines: tuple[str, ...]

    def holds(self, x: float, y: float) -> bool:
        return self.left <= x <= self.right and self.bottom <= y <= self.top


def has_rules(page: pypdfium2.PdfPage) -> bool:
    """Whether the page's paths give at least two horizontal and two vertical edges: a thin
    path is one edge, any other path counts as the four sides of its box (as pdfplumber reads a
    rectangle). Without that, no ruled table can be on the page."""
    import pypdfium2.raw as pdfium_c

    horizontal = vertical = 0
    for path in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=3):
        left, bottom, right, top = path.get_bounds()
        width, height = right - left, top - bottom
        if height <= _RULE_THICKNESS and width >= _MIN_EDGE:
            horizontal += 1
        elif width <= _RULE_THICKNESS and height >= _MIN_EDGE:
            vertical += 1
        elif width >= _MIN_EDGE and height >= _MIN_EDGE:
            horizontal += 2
            vertical += 2
        if horizontal >= 2 and vertical >= 2:
            return True
    return False


class TableFinder:
    """Finds the ruled tables of a PDF's pages; opens the file with pdfplumber only when a
    page is first asked about, and not at all when pdfplumber is not installed."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._document: Any = None
        #: Pages (1-based) whose ruled tables pdfplumber failed on, with why: their rows stay
        #: plain text lines, and the ingest report says so.
        self.failed: list[tuple[int, str]] = []

    def tables(self, index: int, page: pypdfium2.PdfPage) -> list[PdfTable]:
        """The tables of page ``index`` (0-based) that have at least two rows and two columns
        (a frame around a page of text is no table). A rotated page is not analysed, and a
        page pdfplumber cannot read (PDFium is more lenient with damaged files) has none: its
        text is still read by PDFium (the failure is kept in `failed`)."""
        if page.get_rotation() or not has_rules(page):
            return []
        try:
            return self._find(index, page)
        except (MemoryError, RecursionError):
            raise
        except Exception as error:  # pdfplumber and pdfminer raise many kinds on damaged files
            self.failed.append((index + 1, f"{type(error).__name__}: {error}"))
            return []

    def _find(self, index: int, page: pypdfium2.PdfPage) -> list[PdfTable]:
        document = self._open()
        if document is None:
            return []
        plumber_page = document.pages[index]
        try:
            left, _, _, top = page.get_mediabox()
            found = []
            for table in plumber_page.find_tables():
                rows = [[cell or "" for cell in row] for row in table.extract()]
                rows = [row for row in rows if any(cell.strip() for cell in row)]
                if len(rows) < 2 or max(len(row) for row in rows) < 2:
                    continue
                x0, y0, x1, y1 = table.bbox  # pdfplumber measures y down from the top
                header = column_names(rows[0], range(len(rows[0])))
                lines = tuple(table_lines(header, rows[1:]))
                found.append(PdfTable(left + x0, top - y1, left + x1, top - y0, lines))
            return found
        finally:
            plumber_page.close()

    def close(self) -> None:
        if self._document is not None:
            self._document.close()

    def _open(self) -> Any:
        if self._document is None:
            try:
                import pdfplumber
            except ImportError:
                return None
            self._document = pdfplumber.open(io.BytesIO(self._data))
        return self._document
