"""The offset invariant on real parsed files: for every format, every chunker and any size,
``document.content[chunk.char_start:chunk.char_end] == chunk.text``, nothing is lost, and each
chunk lies in one section and carries its breadcrumb and page.

The chunkers' own property test (test_chunkers.py) draws synthetic documents; this one feeds
them what the parsers really write: headings, list items, pipe tables, page breaks, slides."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from office_files import (
    SALES_HEADER,
    build_csv,
    build_docx,
    build_jsonl,
    build_pptx,
    build_rtf,
    build_xlsx,
    sales_rows,
)
from pdf_files import build_table_pdf, build_text_pdf
from ragwright.models import Document
from ragwright.parsers.registry import ParserRegistry
from ragwright.ports import Chunker
from test_chunkers import (
    assert_exact_trimmed_bounded_ordered,
    assert_nothing_lost,
    assert_one_section_each,
    chunkers,
)

BUILDERS: dict[str, Callable[[Path], object]] = {
    "report.pdf": lambda p: build_text_pdf(p, pages=3),
    "sales.pdf": lambda p: build_table_pdf(p, SALES_HEADER, sales_rows(45)),
    "manual.docx": lambda p: build_docx(p, sections=3, paragraphs=3, table_rows=8),
    "deck.pptx": lambda p: build_pptx(p, slides=3, table_rows=4),
    "sales.xlsx": lambda p: build_xlsx(p, rows=30, sheets=("North", "South")),
    "sales.csv": lambda p: build_csv(p, rows=30),
    "records.jsonl": lambda p: build_jsonl(p, records=6),
    "menu.rtf": lambda p: build_rtf(p, paragraphs=4, table_rows=6),
}


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Document]:
    folder = tmp_path_factory.mktemp("formats")
    registry = ParserRegistry.from_entry_points()
    parsed = {}
    for name, build in BUILDERS.items():
        path = folder / name
        build(path)
        data = path.read_bytes()
        result = registry.parser_for(name, data).parse(data, name)
        parsed[name] = Document("d", name, result.content, result.metadata, result.sections)
    return parsed


@pytest.mark.parametrize("name", list(BUILDERS))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(chunker=chunkers())
def test_chunks_of_every_format_are_exact_spans_in_one_section(
    documents: dict[str, Document], name: str, chunker: Chunker
) -> None:
    document = documents[name]
    assert document.sections, name  # the parser gave structure to check against
    chunks = chunker.chunk(document)
    assert_exact_trimmed_bounded_ordered(document, chunker, chunks)
    assert_nothing_lost(document, chunks)
    assert_one_section_each(document, chunks)
