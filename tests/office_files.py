"""Builders of test files in every office format, made with the libraries at test time.

Each builder writes one file and returns its path. ``size`` parameters scale the file up, so a
throughput benchmark can build larger corpora with the same code the tests use.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

#: Column headers of the generated sales tables.
SALES_HEADER = ("Region", "Product", "Units", "Revenue")
_REGIONS = ("North", "South", "East", "West", "Central")
_PRODUCTS = ("anvil", "bolt", "crank", "dynamo", "gear", "hinge", "lever")


def sales_rows(count: int) -> list[tuple[str, str, int, float]]:
    """``count`` deterministic rows; row ``i`` has product ``<name>-<i>``, so each is unique."""
    return [
        (
            _REGIONS[index % len(_REGIONS)],
            f"{_PRODUCTS[index % len(_PRODUCTS)]}-{index}",
            index * 3 + 1,
            round(index * 12.5 + 0.25, 2),
        )
        for index in range(count)
    ]


def build_csv(path: Path, rows: int = 20, delimiter: str = ",", encoding: str = "utf-8") -> Path:
    with path.open("w", newline="", encoding=encoding) as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(SALES_HEADER)
        writer.writerows(sales_rows(rows))
    return path


def build_xlsx(path: Path, rows: int = 20, sheets: Sequence[str] = ("Sales",)) -> Path:
    """A workbook with one sales table per sheet (written streaming, so large ones are cheap)."""
    import openpyxl

    workbook = openpyxl.Workbook(write_only=True)
    for name in sheets:
        sheet = workbook.create_sheet(name)
        sheet.append(list(SALES_HEADER))
        for row in sales_rows(rows):
            sheet.append(list(row))
    workbook.properties.title = "Sales report"
    workbook.properties.creator = "Ada Lovelace"
    workbook.properties.created = dt.datetime(2024, 5, 17, 9, 30)
    workbook.save(path)
    return path


def build_docx(path: Path, sections: int = 2, paragraphs: int = 2, table_rows: int = 3) -> Path:
    """A Word file: a Title, then ``sections`` Heading 1 sections, each with a Heading 2
    subsection holding ``paragraphs`` paragraphs, a bullet list, a numbered list and a sales
    table of ``table_rows`` rows."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Field manual"
    document.core_properties.author = "Grace Hopper"
    document.core_properties.created = dt.datetime(2023, 3, 1, 12, 0)
    document.add_paragraph("Field manual", style="Title")
    for number in range(1, sections + 1):
        document.add_heading(f"Chapter {number}", level=1)
        document.add_paragraph(f"Chapter {number} opens with an overview of the work.")
        document.add_heading(f"Details {number}", level=2)
        for index in range(paragraphs):
            document.add_paragraph(
                f"Paragraph {index} of chapter {number} explains calibration step {index}. "
                "The gauge must read zero before the valve is opened."
            )
        document.add_paragraph("first bullet", style="List Bullet")
        document.add_paragraph("second bullet", style="List Bullet")
        document.add_paragraph("step one", style="List Number")
        document.add_paragraph("step two", style="List Number")
        table = document.add_table(rows=1, cols=len(SALES_HEADER))
        for cell, name in zip(table.rows[0].cells, SALES_HEADER, strict=True):
            cell.text = name
        for row in sales_rows(table_rows):
            cells = table.add_row().cells
            for cell, value in zip(cells, row, strict=True):
                cell.text = str(value)
    document.save(path)
    return path


def build_pptx(path: Path, slides: int = 3, table_rows: int = 3) -> Path:
    """A deck: ``slides`` title-and-content slides with bullets and speaker notes; the last
    one also has a sales table of ``table_rows`` rows; plus one slide without a title."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    deck.core_properties.title = "Quarterly review"
    deck.core_properties.author = "Alan Turing"
    for number in range(1, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Topic {number}"
        body = slide.placeholders[1].text_frame
        body.text = f"Point one of topic {number}"
        body.add_paragraph().text = f"Point two of topic {number}"
        slide.notes_slide.notes_text_frame.text = f"Say hello to the audience of topic {number}."
        if number == slides:
            shape = slide.shapes.add_table(
                table_rows + 1, len(SALES_HEADER), Inches(1), Inches(4), Inches(8), Inches(2)
            )
            for column, name in enumerate(SALES_HEADER):
                shape.table.cell(0, column).text = name
            for row_number, row in enumerate(sales_rows(table_rows), start=1):
                for column, value in enumerate(row):
                    shape.table.cell(row_number, column).text = str(value)
    blank = deck.slides.add_slide(deck.slide_layouts[6])
    box = blank.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
    box.text_frame.text = "A slide without a title."
    deck.save(path)
    return path


def build_jsonl(path: Path, records: int = 5) -> Path:
    """JSON Lines records with ``title``, ``body``, ``author``, ``year`` and a nested ``meta``."""
    with path.open("w", encoding="utf-8") as handle:
        for index in range(records):
            record = {
                "title": f"Note {index}",
                "body": f"Record {index} describes the maintenance of pump {index}.",
                "author": ["ada", "grace", "alan"][index % 3],
                "year": 2020 + index % 4,
                "meta": {"tags": ["pump", f"unit-{index}"], "reviewed": index % 2 == 0},
            }
            handle.write(json.dumps(record) + "\n")
    return path


def build_rtf(path: Path, paragraphs: int = 3, table_rows: int = 0) -> Path:
    """An RTF file with a title in its info group, accents (as ``\\'e9`` and ``\\u`` escapes),
    ``paragraphs`` paragraphs and, with ``table_rows``, a sales table after them."""
    body = "".join(
        f"Paragraph {index} of the caf\\'e9 menu lists cr\\u232\\'e8me br\\u251\\'fbl\\u233\\'e9e."
        "\\par\n"
        for index in range(paragraphs)
    )
    if table_rows:
        cells = "".join(f"\\cellx{1500 * (n + 1)}" for n in range(len(SALES_HEADER)))
        for row in [SALES_HEADER, *sales_rows(table_rows)]:
            values = "".join(f"{value}\\cell " for value in row)
            body += f"\\trowd{cells}\\intbl {values}\\row\n"
        body += "\\pard That is all.\\par\n"
    rtf = (
        "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Helvetica;}}"
        "{\\info{\\title Menu}{\\author Chef}}\n"
        "{\\pard\\b Daily menu\\b0\\par}\n" + body + "}"
    )
    path.write_text(rtf, encoding="ascii")
    return path


def build_zip_bomb(path: Path, inflated_mb: int = 64, part: str = "word/document.xml") -> Path:
    """An OOXML-looking archive whose ``part`` inflates to ``inflated_mb`` MB of zeros-like XML
    from a tiny compressed size (written streaming: building it needs little memory)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        with archive.open(part, "w", force_zip64=True) as handle:
            handle.write(b'<?xml version="1.0"?><w:document><w:body>')
            block = b" " * (1024 * 1024)
            for _ in range(inflated_mb):
                handle.write(block)
            handle.write(b"</w:body></w:document>")
    return path


def build_billion_laughs_docx(path: Path) -> Path:
    """A real DOCX whose ``word/document.xml`` declares nested entities (billion laughs)."""
    return add_entity_bomb(build_docx(path, sections=1), "word/document.xml")


def add_entity_bomb(path: Path, part: str) -> Path:
    """Give ``part`` of an OOXML file a DTD of nested entities (a "billion laughs")."""
    laughs = ['<!ENTITY lol "lol">']
    laughs += [
        f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10 if n > 1 else "&lol;" * 10}">'
        for n in range(1, 10)
    ]
    doctype = "<!DOCTYPE root [" + "".join(laughs) + "]>"
    _rewrite_part(path, part, lambda xml: _after_declaration(xml, doctype))
    return path


def set_cached_formula(path: Path, sheet_part: str, cell: str, formula: str, value: str) -> Path:
    """Give ``cell`` of an openpyxl-written workbook a formula *and* a cached value, as a
    spreadsheet program saves them (openpyxl itself can write only one of the two)."""

    def patch(xml: str) -> str:
        start = xml.index(f'<c r="{cell}"')
        end = xml.index("</c>", start) + len("</c>")
        return xml[:start] + f'<c r="{cell}"><f>{formula}</f><v>{value}</v></c>' + xml[end:]

    _rewrite_part(path, sheet_part, patch)
    return path


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'
)


def _after_declaration(xml: str, insert: str) -> str:
    end = xml.index("?>") + 2 if xml.startswith("<?xml") else 0
    return xml[:end] + insert + xml[end:]


def _rewrite_part(path: Path, name: str, change: object) -> None:
    assert callable(change)
    buffer = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == name:
                data = change(data.decode("utf-8")).encode("utf-8")
            out.writestr(info.filename, data)
    path.write_bytes(buffer.getvalue())
