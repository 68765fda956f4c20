"""Layout read from a PDF text layer: paragraph breaks, and headings by font size.

PDFium ends every line with ``\\r\\n`` alike. Measuring the two characters around each line
break (their loose, font-height boxes) tells a paragraph break from a wrapped line, and the
font size of each block's first character tells headings from body text. Only a few calls per
line, so the text layer is still read at well over a thousand pages a second.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pypdfium2

    from ragwright.parsers._pdf_tables import PdfTable

_LINE_BREAK = re.compile(r"\r\n")
#: A heading's font is at least this much larger than the body text's.
HEADING_RATIO = 1.15
_MAX_HEADING_CHARS = 120
_MAX_LEVELS = 6


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph of a page as PDFium wrote it: its lines, and its first character's size."""

    text: str
    size: float
    lines: int


@dataclass(frozen=True, slots=True)
class FontHeading:
    page: int  # 0-based
    level: int  # 1-based
    text: str  # the block's raw text


def read_layout(
    textpage: pypdfium2.PdfTextPage, tables: Sequence[PdfTable] = ()
) -> tuple[str, list[Block]]:
    """The page's text with ``\\n\\n`` where paragraphs break (other line ends stay
    ``\\r\\n``), and its blocks. The lines of each of ``tables`` are replaced by the table's
    pipe rows, a block of their own, where its first line was. Without a one-to-one map from
    text to characters (UTF-16 surrogates), the text is returned as PDFium gives it, with no
    blocks (and no tables)."""
    import pypdfium2.raw as pdfium_c

    text = str(textpage.get_text_range())
    if len(text) != textpage.count_chars():
        return text, []
    box = pdfium_c.FS_RECTF()

    def vertical(index: int) -> tuple[float, float] | None:
        if not pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, index, box):
            return None
        return (box.top, box.bottom) if box.top > box.bottom else None

    def size(index: int) -> float:
        return float(pdfium_c.FPDFText_GetFontSize(textpage.raw, index)) if index < len(text) else 0

    pieces: list[str] = []  # lines, each followed by its separator
    blocks: list[tuple[list[str], float]] = []
    written: set[int] = set()  # the tables already in place
    after_table = False
    start = 0
    for match in [*_LINE_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        line = text[start:end]
        table = _table_of(textpage, line, start, tables) if tables else None
        if table is not None:
            if table not in written:
                written.add(table)
                rows = list(tables[table].lines)
                if pieces:
                    pieces[-1] = "\n\n"
                pieces += ["\n".join(rows), "\n\n"]
                blocks.append((rows, size(start)))
            after_table = True
        else:
            if not blocks or after_table or _breaks(vertical(start - 3), vertical(start)):
                if pieces:
                    pieces[-1] = "\n\n"
                blocks.append(([line], size(start)))
            else:
                blocks[-1][0].append(line)
            pieces += [line, "\r\n"]
            after_table = False
        if match is not None:
            start = match.end()
    if pieces:
        pieces.pop()  # no separator after the last line
    return "".join(pieces), [Block("\n".join(lines), size, len(lines)) for lines, size in blocks]


def _table_of(
    textpage: pypdfium2.PdfTextPage, line: str, start: int, tables: Sequence[PdfTable]
) -> int | None:
    """Which table a line lies in: the one holding the centres of its first and last
    characters. A line that runs out of a table (text set beside it) lies in none and is kept
    as it is, so no text is lost."""
    if not line.strip():
        return None
    first = start + len(line) - len(line.lstrip())
    last = start + len(line.rstrip()) - 1
    centres = []
    for index in (first, last):
        left, bottom, right, top = textpage.get_charbox(index)
        centres.append(((left + right) / 2, (bottom + top) / 2))
    for number, table in enumerate(tables):
        if all(table.holds(x, y) for x, y in centres):
            return number
    return None


def _breaks(before: tuple[float, float] | None, after: tuple[float, float] | None) -> bool:
    """A paragraph break: the gap between the lines is over half a line high, or the next line
    starts higher up the page (a new column or block)."""
    if before is None or after is None:
        return False
    height = min(before[0] - before[1], after[0] - after[1])
    gap = before[1] - after[0]
    return gap > height / 2 or after[0] > before[0] + height / 2


def font_headings(pages: Sequence[Sequence[Block]]) -> list[FontHeading]:
    """Headings by font size: short blocks (one or two lines, a few words) set clearly larger
    than the body text (the size most characters have). Larger sizes are higher levels.
    A document where such blocks are not rare is taken to have no font-size headings."""
    sizes: Counter[float] = Counter()
    for blocks in pages:
        for block in blocks:
            if block.text.strip():
                sizes[round(block.size, 1)] += len(block.text)
    if not sizes:
        return []
    body = sizes.most_common(1)[0][0]
    candidates = [
        (page, block)
        for page, blocks in enumerate(pages)
        for block in blocks
        if _looks_like_heading(block, body)
    ]
    total = sum(len(blocks) for blocks in pages)
    if not candidates or len(candidates) > max(3, total // 3):
        return []
    levels = sorted({round(block.size, 1) for _, block in candidates}, reverse=True)
    return [
        FontHeading(page, levels.index(round(block.size, 1)) + 1, block.text)
        for page, block in candidates
        if levels.index(round(block.size, 1)) < _MAX_LEVELS
    ]


def _looks_like_heading(block: Block, body: float) -> bool:
    text = block.text.strip()
    return (
        block.lines <= 2
        and 0 < len(text) <= _MAX_HEADING_CHARS
        and any(char.isalpha() for char in text)
        and block.size >= body * HEADING_RATIO
    )
