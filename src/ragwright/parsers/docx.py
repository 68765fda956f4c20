"""Word documents (.docx): headings by style into sections, lists as items, tables as rows.

The body is read in order (paragraphs and tables interleaved, content controls included). A
paragraph styled ``Title`` or ``Heading 1``–``Heading 9`` (or a style based on one) opens a
section; its breadcrumb is the chain of enclosing headings. ``Title`` ranks above
``Heading 1``. Headers, footers, footnotes, comments and text boxes are not read. The package
passes the checks in `ragwright.parsers._ooxml` first, and media is never inflated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder
from ragwright.parsers._office import require_office
from ragwright.parsers._ooxml import ArchiveLimits, sanitized_package
from ragwright.parsers._properties import core_properties

if TYPE_CHECKING:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_HEADING_STYLE = re.compile(r"heading ([1-9])")
_LIST_LEVEL = re.compile(r"list (?:bullet|number|paragraph|continue)?\s*([2-9])?")
#: How far up a style's "based on" chain a heading style is looked for.
_STYLE_DEPTH = 8


class DocxParser:
    """Reads Word files. Lists become ``- item`` lines (``1.``, ``2.`` for numbered styles),
    indented by level; tables become pipe rows under their first row.

    Metadata: ``title``, ``author``, ``subject``, ``keywords``, ``created``, ``modified`` from
    the document properties; the title falls back to the first ``Title``/top heading.
    """

    extensions: tuple[str, ...] = (".docx", ".docm")
    content_types: tuple[str, ...] = (CONTENT_TYPE,)

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        require_office("docx", "the DOCX parser")
        self.limits = limits or ArchiveLimits()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        import docx
        from docx.table import Table

        package = sanitized_package(data, source, self.limits)
        try:
            document = docx.Document(package)
            builder = TextBuilder()
            lists = _ListCounter()
            styles = _Styles(document)
            body = document._body
            for block in _blocks(body._element, body):
                if isinstance(block, Table):
                    lists.reset()
                    _write_table(builder, block)
                else:
                    _write_paragraph(builder, block, styles, lists)
            metadata = core_properties(document.core_properties)
        except Exception as error:  # python-docx raises many kinds for a broken package
            raise ParseError(source, f"not a readable Word document: {error}") from error
        parsed = builder.build(metadata, CONTENT_TYPE)
        if "title" in metadata or not parsed.sections or not parsed.sections[0].heading_path:
            return parsed
        return replace(parsed, metadata={**metadata, "title": parsed.sections[0].heading_path[0]})


def _blocks(element: Any, parent: Any) -> Iterator[Paragraph | Table]:
    """Paragraphs and tables in document order, those inside content controls included."""
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for child in element.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, parent)
        elif child.tag == qn("w:tbl"):
            yield Table(child, parent)
        elif child.tag == qn("w:sdt"):
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from _blocks(content, parent)


class _ListCounter:
    """Numbers of the numbered list items written so far, per level; reset by other blocks."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def next(self, level: int) -> int:
        for deeper in [key for key in self.counts if key > level]:
            del self.counts[deeper]  # a sub-list starts again at 1 under its next parent
        self.counts[level] = self.counts.get(level, 0) + 1
        return self.counts[level]

    def reset(self) -> None:
        self.counts.clear()


def _write_paragraph(
    builder: TextBuilder, paragraph: Paragraph, styles: _Styles, lists: _ListCounter
) -> None:
    text = paragraph.text
    names = styles.names(paragraph)
    level = _heading_level(names)
    if level is not None:
        lists.reset()
        builder.heading(text, level)
        return
    item = _list_item(paragraph, names)
    if item is None:
        lists.reset()
        builder.paragraph(text)
        return
    depth, numbered = item
    if text.strip():
        marker = f"{lists.next(depth)}." if numbered else "-"
        builder.line(f"{'  ' * depth}{marker} {text.strip()}")


class _Styles:
    """Style names by style id, each with the names of the styles it is based on, nearest
    first and lower case. python-docx looks a paragraph's style up by scanning every style,
    so the chains are worked out once per style id, not once per paragraph."""

    def __init__(self, document: Any) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self._styles = {
            style.style_id: style
            for style in document.styles
            if style.type == WD_STYLE_TYPE.PARAGRAPH
        }
        self._default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._chains: dict[str | None, list[str]] = {}

    def names(self, paragraph: Paragraph) -> list[str]:
        style_id = paragraph._p.style
        chain = self._chains.get(style_id)
        if chain is None:
            chain = []
            style: Any = self._styles.get(style_id, self._default)
            while style is not None and len(chain) < _STYLE_DEPTH:
                chain.append((style.name or "").strip().lower())
                style = style.base_style
            self._chains[style_id] = chain
        return chain


def _heading_level(names: list[str]) -> int | None:
    """1 for ``Title``, 2–10 for ``Heading 1``–``Heading 9``; None for body text."""
    for name in names:
        if name == "title":
            return 1
        if match := _HEADING_STYLE.fullmatch(name):
            return int(match.group(1)) + 1
    return None


def _list_item(paragraph: Paragraph, names: list[str]) -> tuple[int, bool] | None:
    """(depth, numbered) for a list item — a paragraph with numbering or a list style."""
    properties = paragraph._p.pPr
    numbering: Any = properties.numPr if properties is not None else None
    style = next((name for name in names if name.startswith("list")), None)
    if numbering is None and style is None:
        return None
    numbered = style is not None and "number" in style
    depth = 0
    if numbering is not None and numbering.ilvl is not None:
        depth = int(numbering.ilvl.val)
    elif style is not None and (match := _LIST_LEVEL.fullmatch(style)) and match.group(1):
        depth = int(match.group(1)) - 1
    return depth, numbered


def _write_table(builder: TextBuilder, table: Table) -> None:
    rows = [row for row in _table_rows(table) if any(cell.strip() for cell in row)]
    if rows:
        builder.table(rows[0], rows[1:])


def _table_rows(table: Table) -> Iterator[list[str]]:
    """Cell texts row by row, read from the XML (python-docx's cell grid is slow). A cell
    spanning columns is written once; a cell merged down repeats the text above, so each row
    reads on its own."""
    above: dict[int, str] = {}
    for row in table._tbl.tr_lst:
        cells: list[str] = []
        column = 0
        for cell in row.tc_lst:
            text = "\n".join(paragraph.text for paragraph in cell.p_lst)
            if cell.vMerge == "continue":
                text = above.get(column, "")
            above[column] = text
            cells.append(text)
            column += cell.grid_span
        yield cells
