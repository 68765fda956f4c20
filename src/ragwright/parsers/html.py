"""HTML: readable text of the main content, with sections from h1–h6.

The text is built here (it is not in the file), so section offsets are recorded while the text
is written and are exact by construction. Boilerplate (scripts, navigation, banners, forms) is
dropped; ``<main>`` or a single ``<article>`` is preferred over the whole body.

A page nested deeper than `MAX_DEPTH` elements is refused (`ParseLimitExceeded`) before its
tree is built: the tree builder's work grows with the depth (see `ragwright.parsers._html_depth`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragwright.errors import ParseLimitExceeded
from ragwright.models import ParsedDocument
from ragwright.parsers._html_depth import MAX_DEPTH, deeper_than
from ragwright.parsers._tables import table_lines
from ragwright.parsers._text import (
    Heading,
    collapse_whitespace,
    headed_document,
    normalize,
    read_text,
)

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

_SKIP_TAGS = frozenset(
    "head script style noscript template svg canvas math nav aside form iframe object embed "
    "button select textarea dialog audio video map".split()
)
_SKIP_ROLES = frozenset("navigation banner contentinfo search complementary dialog".split())
_SECTIONING = frozenset({"article", "section", "main"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPH_BLOCKS = frozenset(
    "p pre blockquote section article main table figure hr address details fieldset "
    "h1 h2 h3 h4 h5 h6".split()
)
_LINE_BLOCKS = frozenset(
    "div li tr dt dd caption figcaption summary legend header footer body center".split()
)
_LISTS = frozenset({"ul", "ol", "menu"})
_CELLS = frozenset({"td", "th"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w:.-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([\w:.-]+)""", re.IGNORECASE)


class HtmlParser:
    """Reads HTML: main content as text (lists as ``- item``, data tables as pipe rows under
    their first row; a table used for layout is read as ordinary content).

    Metadata: ``title`` (``<title>``, else the first h1), and ``description``, ``author`` and
    ``language`` when the page declares them.
    """

    extensions: tuple[str, ...] = (".html", ".htm", ".xhtml")
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        from selectolax.lexbor import LexborHTMLParser  # a dependency, but a heavy import

        text, warnings = read_text(data, source, declared_charset(data))
        if deeper_than(text) is not None:
            raise ParseLimitExceeded(
                source,
                f"the HTML nests elements more than {MAX_DEPTH:,} deep (reading it would take "
                "time that grows with the square of its size)",
            )
        tree = LexborHTMLParser(text)
        content, headings = "", []
        for root in _content_roots(tree):
            writer = _Writer()
            _render(root, writer)
            content, headings = writer.content, writer.headings
            if content:
                break
        metadata = _metadata(tree)
        return headed_document(content, headings, metadata, "text/html", warnings)


def declared_charset(data: bytes) -> str | None:
    """The charset a page declares in its first KB (``<meta charset>`` or the XML declaration)."""
    head = data[:2048]
    match = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return match.group(1).decode("ascii") if match else None


def _content_roots(tree: LexborHTMLParser) -> Iterator[LexborNode]:
    """Where to read from, best first: ``<main>``, a lone ``<article>``, then the whole body."""
    main = tree.css_first("main, [role=main]")
    if main is not None:
        yield main
    # Comments are often articles inside the post's article; only outermost ones count.
    articles = [node for node in tree.css("article") if not _inside(node, "article")]
    if len(articles) == 1:
        yield articles[0]
    body = tree.body or tree.root
    if body is not None:
        yield body


def _inside(node: LexborNode, tag: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == tag:
            return True
        parent = parent.parent
    return False


def _metadata(tree: LexborHTMLParser) -> dict[str, str]:
    metadata: dict[str, str] = {}
    title = tree.css_first("head > title")  # not an <svg><title> in the body
    if title is not None and (text := collapse_whitespace(title.text())):
        metadata["title"] = text
    for name in ("description", "author"):
        meta = tree.css_first(f'meta[name="{name}" i]')
        if meta is not None and (
            value := collapse_whitespace(meta.attributes.get("content") or "")
        ):
            metadata[name] = value
    html = tree.css_first("html")
    if html is not None and (lang := (html.attributes.get("lang") or "").strip()):
        metadata["language"] = lang
    return metadata


@dataclass
class _List:
    ordered: bool
    counter: int = 1


@dataclass
class _Writer:
    """Appends text with block separation decided lazily, and records heading offsets.

    A block boundary only asks for line breaks (``pending``); they are written just before the
    next text, so boundaries merge and the content never starts or ends with whitespace.
    """

    parts: list[str] = field(default_factory=list)
    length: int = 0
    headings: list[Heading] = field(default_factory=list)
    pending: int = 0  # newlines owed before the next text
    space: bool = False  # a collapsed space owed before the next text on this line
    prefix: str = ""  # list marker owed before the next text
    separator: str = ""  # table cell separators owed before the next text
    at_line_start: bool = True
    inline_depth: int = 0  # inside a table cell or heading: block boundaries become spaces
    heading: list[str] | None = None  # text of the heading being written
    heading_start: int | None = None

    @property
    def content(self) -> str:
        return "".join(self.parts)

    def block(self, newlines: int) -> None:
        if self.inline_depth:
            self.space = True
        elif not self.prefix:  # a block opening right after a list marker stays on its line
            self.pending = max(self.pending, newlines)

    def line_break(self) -> None:
        if self.inline_depth:
            self.space = True
        else:
            self.pending = min(self.pending + 1, 2)

    def text(self, text: str) -> None:
        text = _WHITESPACE.sub(" ", normalize(text))
        if text.startswith(" "):
            self.space = True
        if stripped := text.strip(" "):
            self._write(stripped)
            self.space = text.endswith(" ")

    def raw(self, text: str) -> None:
        if text := normalize(text):  # entities can spell "\r" or decomposed accents
            self._write(text)

    def _write(self, text: str) -> None:
        if self.length and self.pending:
            self._strip_trailing_whitespace()
            self._append("\n" * self.pending)
            self.at_line_start = True
        elif self.space and not self.at_line_start:
            self._append(" ")
        self.pending, self.space = 0, False
        if self.separator:
            self._append(self.separator.lstrip() if self.at_line_start else self.separator)
            self.separator = ""
        if self.prefix:
            self._append(self.prefix)
            self.prefix = ""
        if self.heading is not None and self.heading_start is None:
            self.heading_start = self.length
        self._append(text)
        self.at_line_start = text.endswith("\n")

    def _append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)
        if self.heading is not None and self.heading_start is not None:
            self.heading.append(text)

    def _strip_trailing_whitespace(self) -> None:
        while self.parts:
            last = self.parts[-1]
            kept = last.rstrip()
            self.length -= len(last) - len(kept)
            if kept:
                self.parts[-1] = kept
                return
            self.parts.pop()

    def open_heading(self) -> None:
        self.block(2)
        self.inline_depth += 1
        self.heading, self.heading_start = [], None

    def close_heading(self, level: int) -> None:
        self.inline_depth -= 1
        start = self.heading_start
        if self.heading is not None and start is not None and start < self.length:
            text = collapse_whitespace("".join(self.heading))
            if text:
                self.headings.append(Heading(start, level, text))
        self.heading, self.heading_start = None, None
        self.block(2)


@dataclass
class _Renderer:
    writer: _Writer
    lists: list[_List] = field(default_factory=list)
    cells_in_row: list[int] = field(default_factory=list)
    pre_depth: int = 0
    item_depth: int = 0  # inside a list item, paragraphs are lines (a tight list)
    sectioning_depth: int = 0

    def skip(self, node: LexborNode, tag: str) -> bool:
        if tag in _SKIP_TAGS:
            return True
        if tag in ("header", "footer") and not self.sectioning_depth:
            return True  # page banner/footer; inside an article it is the article's own
        attributes = node.attributes
        if "hidden" in attributes or attributes.get("aria-hidden") == "true":
            return True
        role = (attributes.get("role") or "").strip().lower()
        return role in _SKIP_ROLES or bool(_HIDDEN_STYLE.search(attributes.get("style") or ""))

    def open(self, tag: str, node: LexborNode) -> None:
        writer = self.writer
        if tag in _HEADINGS:
            writer.open_heading()
        elif tag in _LISTS:
            writer.block(1 if self.lists else 2)
            self.lists.append(_List(tag == "ol", _start(node)))
        elif tag == "li":
            writer.block(1)
            writer.prefix = self._marker()
            self.item_depth += 1
        elif tag == "tr":
            writer.block(1)
            self.cells_in_row.append(0)
        elif tag in _CELLS:
            self._open_cell()
        elif tag == "br":
            writer.line_break()
        elif tag in _PARAGRAPH_BLOCKS:
            writer.block(1 if self.item_depth else 2)
        elif tag in _LINE_BLOCKS:
            writer.block(1)
        self.pre_depth += tag == "pre"
        self.sectioning_depth += tag in _SECTIONING

    def close(self, tag: str) -> None:
        writer = self.writer
        if tag in _HEADINGS:
            writer.close_heading(_HEADINGS[tag])
        elif tag in _LISTS:
            self.lists.pop()
            writer.block(1 if self.lists else 2)
        elif tag == "li":
            writer.prefix = ""  # an empty item writes no marker
            writer.block(1)
            self.item_depth -= 1
        elif tag == "tr":
            self.cells_in_row.pop()
            writer.separator = ""  # trailing empty cells add nothing
            writer.block(1)
        elif tag in _CELLS:
            writer.inline_depth -= 1
        elif tag in _PARAGRAPH_BLOCKS:
            writer.block(1 if self.item_depth else 2)
        elif tag in _LINE_BLOCKS:
            writer.block(1)
        self.pre_depth -= tag == "pre"
        self.sectioning_depth -= tag in _SECTIONING

    def table(self, node: LexborNode, rows: list[list[str]]) -> None:
        """A data table as pipe rows under its first row (see `ragwright.parsers._tables`),
        after its caption."""
        writer = self.writer
        writer.block(2)
        caption = node.css_first("caption")
        if caption is not None and (text := collapse_whitespace(caption.text(separator=" "))):
            writer.text(text)
            writer.block(1)
        for number, line in enumerate(table_lines(rows[0], rows[1:])):
            if number:
                writer.block(1)
            writer.raw(line)
        writer.block(2)

    def text(self, text: str) -> None:
        if self.pre_depth:
            self.writer.raw(text)
        else:
            self.writer.text(text)

    def _marker(self) -> str:
        indent = "  " * max(len(self.lists) - 1, 0)
        if self.lists and self.lists[-1].ordered:
            current = self.lists[-1]
            current.counter += 1
            return f"{indent}{current.counter - 1}. "
        return f"{indent}- "

    def _open_cell(self) -> None:
        writer = self.writer
        if self.cells_in_row:
            if self.cells_in_row[-1]:
                # Owed, not written: a row's empty cells in the middle still count, but a row
                # of empty cells writes nothing.
                writer.separator += "| " if writer.separator else " | "
            self.cells_in_row[-1] += 1
        writer.inline_depth += 1


def _start(node: LexborNode) -> int:
    try:
        return int((node.attributes.get("start") or "1").strip())
    except ValueError:
        return 1


def _render(root: LexborNode, writer: _Writer) -> None:
    """Walk the tree iteratively (deeply nested pages must not hit the recursion limit)."""
    renderer = _Renderer(writer)
    stack: list[tuple[LexborNode, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        tag = node.tag or ""
        if closing:
            renderer.close(tag)
        elif tag == "-text":
            renderer.text(node.text_content or "")
        elif node.is_element_node and not renderer.skip(node, tag):
            if tag == "table" and (rows := _data_table(node)):
                renderer.table(node, rows)
                continue
            renderer.open(tag, node)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(list(_children(node))))


def _data_table(table: LexborNode) -> list[list[str]] | None:
    """A data table's rows of cell texts (empty rows left out); None for a table used for
    layout: one with a nested table or a heading, or with no row of two cells or more."""
    # The selectors match the table itself too, hence "more than one".
    if len(table.css("table")) > 1 or table.css_first("h1, h2, h3, h4, h5, h6") is not None:
        return None
    rows: list[list[str]] = []
    for row in table.css("tr"):
        cells = [
            collapse_whitespace(cell.text(deep=True, separator=" "))
            for cell in _children(row)
            if cell.tag in _CELLS
        ]
        if any(cells):
            rows.append(cells)
    if not any(len(row) > 1 for row in rows):
        return None
    return rows


def _children(node: LexborNode) -> Iterator[LexborNode]:
    child = node.child
    while child is not None:
        yield child
        child = child.next
