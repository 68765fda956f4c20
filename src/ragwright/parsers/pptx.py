"""PowerPoint decks (.pptx): one section per slide, with its title, text, tables and notes.

A slide's section is headed by its title (``Slide N`` when it has none) and carries the slide
number as its ``page``, so every chunk of the slide has ``page`` = slide number in its
metadata. Text frames are read in the slide's shape order (groups included), tables become pipe
rows, and the speaker notes follow as a ``Notes:`` paragraph. Pictures and charts are not read.
The package passes the checks in `ragwright.parsers._ooxml` first; media is never inflated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder, clean
from ragwright.parsers._office import require_office
from ragwright.parsers._ooxml import ArchiveLimits, sanitized_package
from ragwright.parsers._properties import core_properties

CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


class PptxParser:
    """Reads PowerPoint files. Metadata: ``title``, ``author``, ``subject``, ``keywords``,
    ``created``, ``modified`` from the document properties, and ``slides`` (the count)."""

    extensions: tuple[str, ...] = (".pptx", ".pptm")
    content_types: tuple[str, ...] = (CONTENT_TYPE,)

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        require_office("pptx", "the PPTX parser")
        self.limits = limits or ArchiveLimits()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        import pptx

        package = sanitized_package(data, source, self.limits)
        try:
            deck = pptx.Presentation(package)
            builder = TextBuilder()
            count = 0
            for count, slide in enumerate(deck.slides, start=1):
                _write_slide(builder, slide, count)
            metadata = core_properties(deck.core_properties)
        except Exception as error:  # python-pptx raises many kinds for a broken package
            raise ParseError(source, f"not a readable PowerPoint deck: {error}") from error
        metadata["slides"] = count
        return builder.build(metadata, CONTENT_TYPE)


def _write_slide(builder: TextBuilder, slide: Any, number: int) -> None:
    title_shape = slide.shapes.title
    title = clean(title_shape.text_frame.text) if title_shape is not None else ""
    builder.heading(title or f"Slide {number}", level=1, page=number)
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_table", False):
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            rows = [row for row in rows if any(cell.strip() for cell in row)]
            if rows:
                builder.table(rows[0], rows[1:])
        elif getattr(shape, "has_text_frame", False):
            for paragraph in shape.text_frame.paragraphs:
                builder.line(paragraph.text)
            builder.break_block()
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and (text := clean(notes.text)):
            builder.paragraph(f"Notes: {text}")


def _shapes(shapes: Iterable[Any]) -> Iterator[Any]:
    """Shapes in order, the members of groups in place of the group."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group shape
            yield from _shapes(shape.shapes)
        else:
            yield shape
