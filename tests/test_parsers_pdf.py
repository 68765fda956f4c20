"""The PDF parser on PDFs built here: pages, outline headings, metadata, cleanup, failures."""

from __future__ import annotations

import json
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from office_files import SALES_HEADER, sales_rows
from pdf_files import (
    TextPage,
    build_encrypted_pdf,
    build_scanned_pdf,
    build_table_pdf,
    build_text_pdf,
)
from ragwright import Index
from ragwright.errors import MissingDependencyError, ParseError
from ragwright.parsers._pdf_tables import TableFinder
from ragwright.parsers.pdf import PAGE_BREAK, PdfParser
from ragwright.parsers.registry import ParserRegistry


@pytest.fixture(scope="module")
def parser() -> PdfParser:
    return PdfParser(ocr="off")


def test_text_of_every_page_in_order_with_page_breaks_and_paragraphs(
    parser: PdfParser, tmp_path: Path
) -> None:
    plan = build_text_pdf(tmp_path / "report.pdf", pages=3)
    document = parser.parse((tmp_path / "report.pdf").read_bytes(), "report.pdf")
    pages = document.content.split(PAGE_BREAK)
    assert len(pages) == 3
    for text, page in zip(pages, plan, strict=True):
        # headings and paragraphs are blocks separated by one blank line; lines wrap inside
        blocks = [" ".join(block.split("\n")) for block in text.split("\n\n")]
        assert blocks == _page_parts(page)


def _page_parts(page: TextPage) -> list[str]:
    """A page's text in drawing order: chapter, first half, section heading, second half."""
    half = len(page.paragraphs) // 2
    return [page.chapter, *page.paragraphs[:half], page.section, *page.paragraphs[half:]]


def test_sections_carry_page_numbers_and_outline_breadcrumbs(
    parser: PdfParser, tmp_path: Path
) -> None:
    build_text_pdf(tmp_path / "report.pdf", pages=3)
    document = parser.parse((tmp_path / "report.pdf").read_bytes(), "report.pdf")
    described = [(s.page, s.heading_path, s.level) for s in document.sections]
    assert described == [
        (1, ("Chapter 1",), 1),
        (1, ("Chapter 1", "Section 1.1"), 2),
        (2, ("Chapter 2",), 1),
        (2, ("Chapter 2", "Section 2.1"), 2),
        (3, ("Chapter 3",), 1),
        (3, ("Chapter 3", "Section 3.1"), 2),
    ]
    content = document.content
    for section in document.sections:  # each heading section starts with its heading's line
        assert content[section.char_start :].startswith(section.heading_path[-1])
    # contiguous from the start to the end: no text outside a section
    assert document.sections[0].char_start == 0
    assert document.sections[-1].char_end == len(content)
    for before, after in pairwise(document.sections):
        assert before.char_end == after.char_start


def test_metadata_title_author_and_page_count(parser: PdfParser, tmp_path: Path) -> None:
    build_text_pdf(tmp_path / "a.pdf", pages=2, title="Annual  Report", author="Ada Lovelace")
    document = parser.parse((tmp_path / "a.pdf").read_bytes(), "a.pdf")
    assert document.content_type == "application/pdf"
    assert document.metadata["pages"] == 2
    assert document.metadata["title"] == "Annual Report"
    assert document.metadata["author"] == "Ada Lovelace"


def test_a_title_set_once_in_the_largest_type_does_not_start_every_breadcrumb(
    parser: PdfParser, tmp_path: Path
) -> None:
    pdf = canvas.Canvas(str(tmp_path / "guide.pdf"), pagesize=A4)
    pdf.setTitle("")  # no recorded title: the largest type names the document
    pdf.setFont("Helvetica-Bold", 24)
    pdf.drawString(72, 770, "Travel Guide")
    y = 730
    for heading in ("Getting there", "Staying"):
        pdf.setFont("Helvetica-Bold", 16)
        pdf.drawString(72, y, heading)
        y -= 22
        pdf.setFont("Helvetica", 11)
        for line in range(6):
            pdf.drawString(72, y, f"Line {line} of {heading.lower()}: the ferry leaves at nine.")
            y -= 16
        y -= 10
    pdf.showPage()
    pdf.save()
    document = parser.parse((tmp_path / "guide.pdf").read_bytes(), "guide.pdf")
    assert [s.heading_path for s in document.sections] == [(), ("Getting there",), ("Staying",)]
    assert document.metadata["title"] == "Travel Guide"


def test_without_an_outline_headings_come_from_font_sizes(
    parser: PdfParser, tmp_path: Path
) -> None:
    build_text_pdf(tmp_path / "plain.pdf", pages=2, outline=False)  # 18 pt, 14 pt, 11 pt body
    document = parser.parse((tmp_path / "plain.pdf").read_bytes(), "plain.pdf")
    assert [(s.page, s.heading_path, s.level) for s in document.sections] == [
        (1, ("Chapter 1",), 1),
        (1, ("Chapter 1", "Section 1.1"), 2),
        (2, ("Chapter 2",), 1),
        (2, ("Chapter 2", "Section 2.1"), 2),
    ]
    assert document.metadata["title"] == "Generated report"


def test_font_size_headings_need_short_blocks_that_are_rare() -> None:
    from ragwright.parsers._pdf_layout import Block, FontHeading, font_headings

    body = [Block("Body text " * 20, 11.0, 3) for _ in range(6)]
    title = Block("A Title", 20.0, 1)
    assert font_headings([[title, *body]]) == [FontHeading(0, 1, "A Title")]
    long_and_large = Block("Large " * 40, 20.0, 4)  # a big paragraph is not a heading
    assert font_headings([[long_and_large, *body]]) == []
    labels = [Block(f"Label {n}", 20.0, 1) for n in range(4)]  # large but common: not headings
    assert font_headings([[*labels, *body[:4]]]) == []
    assert font_headings([[*labels[:1], *body[:4]]]) == [FontHeading(0, 1, "Label 0")]


def test_hyphenated_line_breaks_are_joined_and_blank_pages_kept(
    parser: PdfParser, tmp_path: Path
) -> None:
    path = tmp_path / "hyphen.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawString(72, 760, "A sentence with an exam-")
    pdf.drawString(72, 746, "ple that wraps.")
    pdf.showPage()
    pdf.showPage()  # a blank page: nothing to read, and nothing to OCR
    pdf.drawString(72, 760, "Third page.")
    pdf.showPage()
    pdf.save()
    document = parser.parse(path.read_bytes(), "hyphen.pdf")
    assert document.content.split(PAGE_BREAK) == [
        "A sentence with an example that wraps.",
        "",
        "Third page.",
    ]
    # one font size throughout: no headings, one plain section per page
    assert [(s.page, s.heading_path) for s in document.sections] == [(1, ()), (2, ()), (3, ())]
    assert not document.warnings


def test_ligature_glyphs_are_spelled_out() -> None:
    from ragwright.parsers.pdf import _clean

    assert _clean("We \ufb01nd the o\ufb03ce \ufb02ow\r\n\x00\n\n\n\nend  ") == (
        "We find the office flow\n\nend"
    )


def test_encrypted_pdf_is_a_parse_error_naming_file_and_reason(
    parser: PdfParser, tmp_path: Path
) -> None:
    build_encrypted_pdf(tmp_path / "locked.pdf")
    with pytest.raises(ParseError, match=r"locked\.pdf: the PDF is encrypted and needs a password"):
        parser.parse((tmp_path / "locked.pdf").read_bytes(), "locked.pdf")


def test_pdf_encrypted_without_a_user_password_is_read(parser: PdfParser, tmp_path: Path) -> None:
    plan = build_encrypted_pdf(tmp_path / "open.pdf", user_password="")
    document = parser.parse((tmp_path / "open.pdf").read_bytes(), "open.pdf")
    assert plan[0].paragraphs[0] in " ".join(document.content.split()).replace("\n", " ")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 3],  # truncated
        lambda data: b"%PDF-1.7\n" + b"\x00garbage" * 100,  # a header and nothing else
    ],
    ids=["truncated", "garbage"],
)
def test_broken_pdf_is_a_parse_error(parser: PdfParser, tmp_path: Path, damage: object) -> None:
    build_text_pdf(tmp_path / "ok.pdf", pages=3)
    broken = damage((tmp_path / "ok.pdf").read_bytes())  # type: ignore[operator]
    with pytest.raises(ParseError, match=r"cannot parse broken\.pdf: damaged or not a PDF"):
        parser.parse(broken, "broken.pdf")


def test_a_pdf_that_is_not_a_pdf_is_refused_by_its_magic_bytes(tmp_path: Path) -> None:
    registry = ParserRegistry.from_entry_points()
    head = b"<!DOCTYPE html><html><body>oops</body></html>"
    with pytest.raises(ParseError) as caught:
        registry.parser_for("download.pdf", head)
    assert str(caught.value) == ("cannot parse download.pdf: not a PDF file: it looks like HTML")
    with pytest.raises(ParseError, match="not a PDF file: it is empty"):
        registry.parser_for("empty.pdf", b"")
    assert isinstance(registry.parser_for("real.PDF", b"%PDF-1.7\n"), PdfParser)


def test_a_pdf_with_bytes_before_its_header_is_read(tmp_path: Path) -> None:
    """PDF readers accept a header anywhere in the first 1,024 bytes (a BOM, a mail or HTTP
    leftover before it); so does the magic check, and the text is read."""
    path = tmp_path / "report.pdf"
    build_text_pdf(path, pages=1)
    data = b"\xef\xbb\xbf\r\n" + b"x" * 900 + path.read_bytes()
    registry = ParserRegistry.from_entry_points()
    doc = registry.parser_for("report.pdf", data).parse(data, "report.pdf")
    assert doc.content.startswith("Chapter 1")
    with pytest.raises(ParseError, match="not a PDF file"):
        registry.parser_for("report.pdf", b"x" * 1100 + path.read_bytes())


def test_missing_pdf_library_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import fails as if not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragwright\[pdf\]'"):
        PdfParser(ocr="off")


def test_ingested_pdf_chunks_carry_pages_and_breadcrumbs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGWRIGHT_OCR", "off")
    (tmp_path / "docs").mkdir()
    plan = build_text_pdf(tmp_path / "docs" / "manual.pdf", pages=4)
    with Index(tmp_path / "index", embedder="hashing") as kb:
        report = kb.ingest([tmp_path / "docs"])
        assert report.ok and report.added == ["docs/manual.pdf"]
        document = kb.documents.get("docs/manual.pdf")
        assert document is not None
        hits = kb.search(plan[2].paragraphs[-1], mode="bm25", top_k=1)
        chunk = hits[0].chunk
        assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.metadata["page"] == 3
        assert chunk.metadata["breadcrumb"] == "Chapter 3 > Section 3.1"
        assert chunk.metadata["title"] == "Generated report"


def test_cli_ingest_reports_bad_pdfs_and_warnings_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from ragwright.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGWRIGHT_OCR", "off")
    docs = tmp_path / "docs"
    docs.mkdir()
    build_text_pdf(docs / "a-report.pdf", pages=2)
    build_scanned_pdf(docs / "b-mixed.pdf", "a scanned page", text_pages=1)
    build_encrypted_pdf(docs / "c-locked.pdf")
    (docs / "d-fake.pdf").write_bytes(b"PK\x03\x04 a zip named .pdf")
    (docs / "e-notes.txt").write_text("Plain notes.", "utf-8")
    command = ["ingest", "docs", "--embedder", "hashing", "--parse-timeout", "60"]
    result = CliRunner().invoke(app, [*command, "--parse-memory", "1024", "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["added"] == ["docs/a-report.pdf", "docs/b-mixed.pdf", "docs/e-notes.txt"]
    assert report["failed"] == [
        {
            "source": "docs/c-locked.pdf",
            "reason": "the PDF is encrypted and needs a password to open",
        },
        {
            "source": "docs/d-fake.pdf",
            "reason": "not a PDF file: it looks like a ZIP archive (Word, Excel and PowerPoint "
            "files are ZIP archives)",
        },
    ]
    assert report["warnings"] == [
        {
            "source": "docs/b-mixed.pdf",
            "message": "page 2 has no text layer and went unread: OCR is disabled "
            "(RAGWRIGHT_OCR=off or ocr='off')",
        }
    ]


@given(
    pages=st.lists(st.text(alphabet="ab \n", max_size=30), min_size=1, max_size=5),
    headings=st.lists(
        st.tuples(st.integers(0, 4), st.integers(1, 3), st.sampled_from(["a", "b a", "zz"])),
        max_size=6,
    ),
)
def test_sections_tile_the_content_whatever_the_outline(
    pages: list[str], headings: list[tuple[int, int, str]]
) -> None:
    from ragwright.parsers.pdf import _assemble, _Heading

    outline = [_Heading(page % len(pages), level, title) for page, level, title in headings]
    content, sections = _assemble(pages, outline)
    assert content == PAGE_BREAK.join(pages)
    covered = [(s.char_start, s.char_end) for s in sections]
    if content:
        assert covered[0][0] == 0 and covered[-1][1] == len(content)
    assert all(start < end for start, end in covered)
    assert all(a[1] == b[0] for a, b in pairwise(covered))
    starts = [0]
    for text in pages:
        starts.append(starts[-1] + len(text) + len(PAGE_BREAK))
    for section in sections:  # a section lies within its page (and the break after it)
        assert section.page is not None
        assert starts[section.page - 1] <= section.char_start < starts[section.page]
        assert section.char_end <= starts[section.page]
        assert (section.level == 0) == (not section.heading_path)


SALES_HEADER_LINE = "| Region | Product | Units | Revenue |\n| --- | --- | --- | --- |"


def sales_line(row: tuple[str, str, int, float]) -> str:
    return "| " + " | ".join(str(cell) for cell in row) + " |"


def test_a_ruled_table_is_pipe_rows_and_repeats_its_header_on_each_page(
    parser: PdfParser, tmp_path: Path
) -> None:
    path = tmp_path / "sales.pdf"
    rows = sales_rows(60)
    build_table_pdf(path, SALES_HEADER, rows)
    doc = parser.parse(path.read_bytes(), "sales.pdf")
    pages = doc.content.split(PAGE_BREAK)
    assert len(pages) == 2
    assert pages[0].startswith("Sales\n\nThe table lists every sale of the quarter.\n\n")
    assert pages[1].endswith("\n\nThat is all.")
    for page in pages:  # reportlab repeats the header row: each page's part is a table
        assert page.count(SALES_HEADER_LINE) == 1
    lines = doc.content.splitlines()
    assert [line for line in lines if line.startswith("| ") and line not in SALES_HEADER_LINE] == [
        sales_line(row) for row in rows
    ]
    assert [section.page for section in doc.sections] == [1, 2]
    assert all(section.heading_path == ("Sales",) for section in doc.sections)


def test_text_beside_a_table_or_inside_a_box_stays_text(parser: PdfParser, tmp_path: Path) -> None:
    path = tmp_path / "framed.pdf"
    build_table_pdf(
        path,
        SALES_HEADER,
        sales_rows(5),
        framed_text="Inside the frame there is only prose.",
        note_beside="A note beside the table about returns.",
    )
    doc = parser.parse(path.read_bytes(), "framed.pdf")
    table = [line for line in doc.content.splitlines() if line.startswith("|")]
    assert table == [*SALES_HEADER_LINE.splitlines(), *(sales_line(row) for row in sales_rows(5))]
    assert " ".join(doc.content.split()).count("A note beside the table about returns.") == 1
    assert doc.content.endswith(PAGE_BREAK + "Inside the frame there is only prose.")


def test_a_table_without_rules_stays_lines_of_text(parser: PdfParser, tmp_path: Path) -> None:
    path = tmp_path / "aligned.pdf"
    build_table_pdf(path, SALES_HEADER, sales_rows(5), ruled=False)
    doc = parser.parse(path.read_bytes(), "aligned.pdf")
    assert "|" not in doc.content
    assert "Region Product Units Revenue" in doc.content
    assert "Central gear-4 13 50.25" in doc.content


def test_without_pdfplumber_a_ruled_table_stays_text(
    parser: PdfParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sales.pdf"
    build_table_pdf(path, SALES_HEADER, sales_rows(5))
    monkeypatch.setitem(sys.modules, "pdfplumber", None)  # import fails
    doc = parser.parse(path.read_bytes(), "sales.pdf")
    assert "|" not in doc.content
    assert "Central gear-4 13 50.25" in doc.content


def test_pages_without_rules_are_never_given_to_pdfplumber(
    parser: PdfParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: TableFinder) -> None:
        raise AssertionError("pdfplumber opened for a page without rules")

    monkeypatch.setattr(TableFinder, "_open", refuse)
    path = tmp_path / "text.pdf"
    build_text_pdf(path, pages=2)
    assert parser.parse(path.read_bytes(), "text.pdf").metadata["pages"] == 2


def test_a_page_pdfplumber_cannot_read_keeps_its_text(
    parser: PdfParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self: TableFinder, index: int, page: object) -> list[object]:
        raise ValueError("pdfminer: bad object")

    monkeypatch.setattr(TableFinder, "_find", fail)
    path = tmp_path / "sales.pdf"
    build_table_pdf(path, SALES_HEADER, sales_rows(60))  # a table across two pages
    parsed = parser.parse(path.read_bytes(), "sales.pdf")
    assert "Central gear-4 13 50.25" in parsed.content
    # Not silently: one warning says which pages' tables went unread as tables, and why.
    assert parsed.warnings == (
        "the ruled tables on pages 1, 2 could not be read (ValueError: pdfminer: bad object); "
        "their rows are kept as plain text, without column names",
    )
