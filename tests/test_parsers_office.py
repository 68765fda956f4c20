"""Office, spreadsheet, JSON and RTF parsers on files built by the libraries at test time."""

from __future__ import annotations

import io
import os
import re
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from office_files import (
    add_entity_bomb,
    build_billion_laughs_docx,
    build_csv,
    build_docx,
    build_jsonl,
    build_pptx,
    build_rtf,
    build_xlsx,
    build_zip_bomb,
    sales_rows,
    set_cached_formula,
)
from ragwright.errors import ConfigError, IngestLimitExceeded, ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._ooxml import (
    ArchiveLimits,
    check_prolog,
    open_package,
    sanitized_package,
)
from ragwright.parsers.csv import CsvParser
from ragwright.parsers.docx import DocxParser
from ragwright.parsers.json import JsonParser
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.pptx import PptxParser
from ragwright.parsers.registry import ParserRegistry
from ragwright.parsers.rtf import RtfParser
from ragwright.parsers.xlsx import XlsxParser

HEADER_LINE = "| Region | Product | Units | Revenue |"


def text_of(doc: ParsedDocument, index: int) -> str:
    section = doc.sections[index]
    return doc.content[section.char_start : section.char_end]


def assert_tiles(doc: ParsedDocument) -> None:
    assert doc.sections
    ends = [section.char_end for section in doc.sections[:-1]]
    assert ends == [section.char_start for section in doc.sections[1:]]
    assert doc.sections[-1].char_end == len(doc.content)


class TestRegistry:
    def test_every_office_format_is_claimed_through_entry_points(self) -> None:
        registry = ParserRegistry.from_entry_points()
        expected = {".csv", ".tsv", ".xlsx", ".docx", ".pptx", ".json", ".jsonl", ".ndjson", ".rtf"}
        assert expected <= set(registry.extensions)


class TestCsv:
    def test_rows_under_the_header(self, tmp_path: Path) -> None:
        doc = CsvParser().parse(build_csv(tmp_path / "s.csv", rows=3).read_bytes(), "s.csv")
        lines = doc.content.split("\n")
        assert lines[0] == HEADER_LINE
        assert lines[1] == "| --- | --- | --- | --- |"
        assert lines[2] == "| North | anvil-0 | 1 | 0.25 |"
        assert len(lines) == 5
        assert doc.metadata == {"rows": 3, "columns": 4, "delimiter": ","}
        assert doc.content_type == "text/csv"
        assert_tiles(doc)

    @pytest.mark.parametrize("delimiter", [";", "\t", "|"])
    def test_dialect_is_sniffed(self, tmp_path: Path, delimiter: str) -> None:
        path = build_csv(tmp_path / "s.csv", rows=4, delimiter=delimiter)
        doc = CsvParser().parse(path.read_bytes(), "s.csv")
        assert doc.content.startswith(HEADER_LINE)
        assert doc.metadata["delimiter"] == delimiter

    @pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252"])
    def test_encoding_is_detected(self, encoding: str) -> None:
        data = "Name,Town\nRenée,Zürich\n".encode(encoding)
        doc = CsvParser().parse(data, "t.csv")
        assert doc.content == "| Name | Town |\n| --- | --- |\n| Renée | Zürich |"

    def test_empty_rows_and_columns_are_skipped_blank_headers_named(self) -> None:
        data = b'a,,,d\n1,,x,\n,,,\n"2, two",,"multi\nline",\n'
        doc = CsvParser().parse(data, "t.csv")
        assert doc.content == (
            "| a | column 3 |\n| --- | --- |\n| 1 | x |\n| 2, two | multi line |"
        )

    def test_pipes_in_cells_are_escaped(self) -> None:
        doc = CsvParser().parse(b"expr,value\na|b,1\n", "t.csv")
        assert doc.content.endswith("| a\\|b | 1 |")

    def test_tsv_extension_reads_tabs(self) -> None:
        doc = CsvParser().parse(b"a,b\tc\n1,2\t3\n", "t.tsv")
        assert doc.content.startswith("| a,b | c |")

    def test_binary_data_is_a_parse_error(self) -> None:
        with pytest.raises(ParseError, match="binary"):
            CsvParser().parse(b"a,b\n\x00\x01\x02", "t.csv")

    def test_empty_file_has_no_content(self) -> None:
        assert CsvParser().parse(b"\n\n", "t.csv").content == ""


class TestXlsx:
    def test_one_section_per_sheet_headed_by_its_name(self, tmp_path: Path) -> None:
        path = build_xlsx(tmp_path / "book.xlsx", rows=5, sheets=("Sales", "Returns"))
        doc = XlsxParser().parse(path.read_bytes(), "book.xlsx")
        assert [s.heading_path for s in doc.sections] == [("Sales",), ("Returns",)]
        for index in range(2):
            lines = text_of(doc, index).strip().split("\n")
            assert lines[2] == HEADER_LINE
            assert len(lines) == 2 + 2 + 5
        assert "| West | dynamo-3 | 10 | 37.75 |" in doc.content
        assert doc.metadata["sheets"] == 2
        assert doc.metadata["title"] == "Sales report"
        assert doc.metadata["author"] == "Ada Lovelace"
        assert doc.metadata["created"].startswith("2024-05-17T09:30")
        assert_tiles(doc)

    def test_formulas_give_cached_values(self, tmp_path: Path) -> None:
        import openpyxl

        workbook = openpyxl.Workbook()
        sheet = workbook.active
        assert sheet is not None
        sheet.append(["a", "b", "total"])
        sheet.append([1, 2, 0])
        workbook.save(tmp_path / "f.xlsx")
        path = set_cached_formula(
            tmp_path / "f.xlsx", "xl/worksheets/sheet1.xml", "C2", "A2+B2", "3"
        )
        doc = XlsxParser().parse(path.read_bytes(), "f.xlsx")
        assert doc.content.endswith("| 1 | 2 | 3 |")
        assert "A2+B2" not in doc.content

    def test_empty_rows_columns_and_sheets_are_skipped(self, tmp_path: Path) -> None:
        import openpyxl

        workbook = openpyxl.Workbook()
        sheet = workbook.active
        assert sheet is not None
        sheet.title = "Data"
        sheet["B2"], sheet["D2"] = "name", "when"
        sheet["B4"], sheet["D4"] = "x", dt_value()
        sheet["B5"] = 2.0
        workbook.create_sheet("Blank")
        workbook.save(tmp_path / "e.xlsx")
        doc = XlsxParser().parse((tmp_path / "e.xlsx").read_bytes(), "e.xlsx")
        assert doc.content == (
            "Data\n\n| name | when |\n| --- | --- |\n| x | 2024-02-29 |\n| 2 |  |"
        )
        assert doc.metadata["sheets"] == 1

    def test_a_sheet_too_big_to_hold_is_streamed_twice_to_the_same_text(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import ragwright.parsers.xlsx as xlsx

        data = build_xlsx(tmp_path / "b.xlsx", rows=40, sheets=("A", "B")).read_bytes()
        held = XlsxParser().parse(data, "b.xlsx")
        monkeypatch.setattr(xlsx, "KEPT_CELLS", 10)
        streamed = XlsxParser().parse(data, "b.xlsx")
        assert streamed == held
        assert held.content.count("\n| ") == 2 * (2 + 40)  # header, separator, rows

    def test_not_a_zip_is_a_parse_error(self) -> None:
        with pytest.raises(ParseError, match="not a zip archive"):
            XlsxParser().parse(b"name,value\n", "fake.xlsx")

    def test_legacy_or_encrypted_compound_file_is_named(self) -> None:
        data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512
        with pytest.raises(ParseError, match="password-protected"):
            XlsxParser().parse(data, "locked.xlsx")

    def test_truncated_archive_is_a_parse_error(self, tmp_path: Path) -> None:
        data = build_xlsx(tmp_path / "b.xlsx").read_bytes()
        with pytest.raises(ParseError, match="corrupt zip"):
            XlsxParser().parse(data[: len(data) // 2], "b.xlsx")

    def test_a_zip_that_is_no_workbook_is_a_parse_error(self, tmp_path: Path) -> None:
        data = build_docx(tmp_path / "d.docx").read_bytes()
        with pytest.raises(ParseError, match="not a readable Excel workbook"):
            XlsxParser().parse(data, "d.xlsx")


def dt_value() -> object:
    import datetime as dt

    return dt.datetime(2024, 2, 29)


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> ParsedDocument:
    path = build_docx(tmp_path_factory.mktemp("docx") / "manual.docx", sections=2)
    return DocxParser().parse(path.read_bytes(), "manual.docx")


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> ParsedDocument:
    path = build_pptx(tmp_path_factory.mktemp("pptx") / "deck.pptx", slides=3)
    return PptxParser().parse(path.read_bytes(), "deck.pptx")


class TestDocx:
    @pytest.fixture
    def doc(self, manual: ParsedDocument) -> ParsedDocument:
        return manual

    def test_headings_by_style_become_breadcrumbs(self, doc: ParsedDocument) -> None:
        assert [s.breadcrumb for s in doc.sections] == [
            "Field manual",
            "Field manual > Chapter 1",
            "Field manual > Chapter 1 > Details 1",
            "Field manual > Chapter 2",
            "Field manual > Chapter 2 > Details 2",
        ]
        assert text_of(doc, 2).startswith("Details 1\n\nParagraph 0 of chapter 1")
        assert_tiles(doc)

    def test_lists_are_items(self, doc: ParsedDocument) -> None:
        assert "- first bullet\n- second bullet\n1. step one\n2. step two" in doc.content

    def test_tables_are_pipe_rows_under_their_header(self, doc: ParsedDocument) -> None:
        table = "\n".join(
            [HEADER_LINE, "| --- | --- | --- | --- |"]
            + [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in sales_rows(3)]
        )
        assert table in text_of(doc, 2)

    def test_core_properties_are_metadata(self, doc: ParsedDocument) -> None:
        assert doc.metadata["title"] == "Field manual"
        assert doc.metadata["author"] == "Grace Hopper"
        assert doc.metadata["created"].startswith("2023-03-01T12:00")

    def test_merged_cells_across_once_and_down_repeated(self, tmp_path: Path) -> None:
        import docx

        document = docx.Document()
        table = document.add_table(rows=2, cols=3)
        for cell, name in zip(table.rows[0].cells, ["a", "b", "c"], strict=True):
            cell.text = name
        merged = table.cell(1, 0).merge(table.cell(1, 1))
        merged.text = "wide"
        table.cell(1, 2).text = "z"
        table.add_row()
        down = table.cell(1, 2).merge(table.cell(2, 2))
        down.text = "tall"
        table.cell(2, 0).text = "y"
        document.save(tmp_path / "m.docx")
        parsed = DocxParser().parse((tmp_path / "m.docx").read_bytes(), "m.docx")
        assert parsed.content.endswith("| wide | tall |  |\n| y |  | tall |")

    def test_media_is_never_inflated(self, tmp_path: Path) -> None:
        """python-docx loads every part: it gets a copy whose media parts are empty."""
        path = build_docx(tmp_path / "p.docx", sections=1)
        picture = os.urandom(3 * 1024 * 1024)  # incompressible, like a real photo
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("word/media/photo.jpeg", picture)
        package = sanitized_package(path.read_bytes(), "p.docx")
        with zipfile.ZipFile(package) as copy, zipfile.ZipFile(path) as original:
            assert copy.read("word/media/photo.jpeg") == b""
            assert copy.read("word/document.xml") == original.read("word/document.xml")
        parsed = DocxParser().parse(path.read_bytes(), "p.docx")
        assert "Chapter 1" in parsed.content

    def test_a_bomb_named_like_media_is_refused(self, tmp_path: Path) -> None:
        path = build_docx(tmp_path / "p.docx", sections=1)
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("word/media/huge.png", b"\0" * (8 * 1024 * 1024))
        with pytest.raises(IngestLimitExceeded, match=r"word/media/huge\.png .* \(max_ratio"):
            DocxParser().parse(path.read_bytes(), "p.docx")


class TestPptx:
    @pytest.fixture
    def doc(self, deck: ParsedDocument) -> ParsedDocument:
        return deck

    def test_one_section_per_slide_with_title_and_number(self, doc: ParsedDocument) -> None:
        assert [(s.heading_path, s.page) for s in doc.sections] == [
            (("Topic 1",), 1),
            (("Topic 2",), 2),
            (("Topic 3",), 3),
            (("Slide 4",), 4),
        ]
        assert_tiles(doc)
        assert doc.metadata["slides"] == 4
        assert doc.metadata["title"] == "Quarterly review"
        assert doc.metadata["author"] == "Alan Turing"

    def test_body_text_and_speaker_notes(self, doc: ParsedDocument) -> None:
        assert text_of(doc, 0) == (
            "Topic 1\n\nPoint one of topic 1\nPoint two of topic 1\n\n"
            "Notes: Say hello to the audience of topic 1.\n\n"
        )
        assert text_of(doc, 3) == "Slide 4\n\nA slide without a title."

    def test_tables_are_pipe_rows(self, doc: ParsedDocument) -> None:
        slide = text_of(doc, 2)
        assert f"{HEADER_LINE}\n| --- | --- | --- | --- |\n| North | anvil-0 | 1 | 0.25 |" in slide
        assert slide.index(HEADER_LINE) < slide.index("Notes:")


class TestOoxmlSafety:
    @pytest.mark.parametrize("parser", [DocxParser, PptxParser, XlsxParser])
    def test_zip_bomb_is_refused_naming_the_limit(self, tmp_path: Path, parser: type) -> None:
        data = build_zip_bomb(tmp_path / "bomb.zip", inflated_mb=8).read_bytes()
        with pytest.raises(IngestLimitExceeded, match="max_ratio"):
            parser().parse(data, "bomb")

    def test_part_size_and_total_limits(self, tmp_path: Path) -> None:
        data = build_docx(tmp_path / "d.docx").read_bytes()
        with pytest.raises(IngestLimitExceeded, match="max_part_size"):
            open_package(data, "d.docx", ArchiveLimits(max_part_size=1000))
        with pytest.raises(IngestLimitExceeded, match="max_total_size"):
            open_package(data, "d.docx", ArchiveLimits(max_total_size=20_000))
        with pytest.raises(IngestLimitExceeded, match="max_entries"):
            open_package(data, "d.docx", ArchiveLimits(max_entries=3))

    def test_zipfile_never_inflates_past_the_declared_size(self) -> None:
        """Why checking declared sizes is enough: a directory that lies is caught."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("word/document.xml", b" " * (4 * 1024 * 1024))
        data = bytearray(buffer.getvalue())
        struct.pack_into("<I", data, data.index(b"PK\x01\x02") + 24, 1024)
        inflated = 0
        with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
            assert archive.getinfo("word/document.xml").file_size == 1024
            with archive.open("word/document.xml") as part, pytest.raises(zipfile.BadZipFile):
                while piece := part.read(65536):
                    inflated += len(piece)
        assert inflated <= 1024

    @pytest.mark.parametrize(
        ("build", "parser", "part"),
        [
            (build_xlsx, XlsxParser, "xl/worksheets/sheet1.xml"),
            (build_xlsx, XlsxParser, "xl/workbook.xml"),
            (build_pptx, PptxParser, "ppt/slides/slide1.xml"),
            (build_docx, DocxParser, "docProps/core.xml"),
        ],
    )
    def test_entity_bombs_in_any_part_are_refused(
        self, tmp_path: Path, build: Any, parser: Any, part: str
    ) -> None:
        path = add_entity_bomb(build(tmp_path / "f"), part)
        with pytest.raises(ParseError, match=f"{re.escape(part)} declares a DTD"):
            parser().parse(path.read_bytes(), "f")

    def test_openpyxl_parses_through_defusedxml(self) -> None:
        import openpyxl

        assert openpyxl.DEFUSEDXML  # the second line of defence is installed and in use

    def test_billion_laughs_docx_is_refused(self, tmp_path: Path) -> None:
        data = build_billion_laughs_docx(tmp_path / "lol.docx").read_bytes()
        with pytest.raises(ParseError, match=r"word/document\.xml declares a DTD"):
            DocxParser().parse(data, "lol.docx")

    @pytest.mark.parametrize(
        "head",
        [
            b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "b">]><x/>',
            b'<?xml version="1.0"?><!-- c --><!DOCTYPE x SYSTEM "file:///etc/passwd"><x/>',
            '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE x><x/>'.encode("utf-16"),
            "<!DOCTYPE x><x/>".encode("utf-16-le"),
            b"<?xml version='1.0'?>" + b" " * 70_000 + b"<!DOCTYPE x><x/>",
        ],
    )
    def test_prologs_with_a_dtd_are_refused(self, head: bytes) -> None:
        with pytest.raises(ParseError):
            check_prolog(head[:65536], "a.docx", "word/document.xml")

    def test_a_clean_prolog_passes(self) -> None:
        check_prolog(b'\xef\xbb\xbf<?xml version="1.0"?>\n<!-- hi --><w:document/>', "a", "p.xml")
        check_prolog('<?xml version="1.0"?><root/>'.encode("utf-16"), "a", "p.xml")

    def test_zip_without_content_types_is_no_office_file(self, tmp_path: Path) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("hello.txt", "hi")
        with pytest.raises(ParseError, match="not an Office Open XML package"):
            DocxParser().parse(buffer.getvalue(), "z.docx")

    def test_non_zip_with_office_extension_is_a_parse_error(self) -> None:
        for parser in (DocxParser(), PptxParser(), XlsxParser()):
            with pytest.raises(ParseError, match="not a zip archive"):
                parser.parse(b"%PDF-1.7 not office", "x")


class TestJson:
    def test_jsonl_records_rendered_as_paths_one_section_each(self, tmp_path: Path) -> None:
        doc = JsonParser().parse(build_jsonl(tmp_path / "n.jsonl", 3).read_bytes(), "n.jsonl")
        assert [s.heading_path for s in doc.sections] == [
            ("Record 1",),
            ("Record 2",),
            ("Record 3",),
        ]
        assert [s.metadata for s in doc.sections] == [{"record": 1}, {"record": 2}, {"record": 3}]
        assert text_of(doc, 1) == (
            "Record 2\n\ntitle: Note 1\nbody: Record 1 describes the maintenance of pump 1.\n"
            "author: grace\nyear: 2021\nmeta.tags[0]: pump\nmeta.tags[1]: unit-1\n"
            "meta.reviewed: false\n\n"
        )
        assert doc.metadata == {"records": 3}
        assert doc.content_type == "application/x-ndjson"
        assert_tiles(doc)

    def test_text_and_meta_fields_per_record(self, tmp_path: Path) -> None:
        options = ParserOptions(text_fields=("title", "body"), meta_fields=("author", "meta.tags"))
        doc = JsonParser(options).parse(
            build_jsonl(tmp_path / "n.jsonl", 2).read_bytes(), "n.jsonl"
        )
        assert text_of(doc, 0) == (
            "Record 1\n\nNote 0\n\nRecord 0 describes the maintenance of pump 0.\n\n"
        )
        assert doc.sections[1].metadata == {
            "record": 2,
            "author": "grace",
            "meta.tags": '["pump", "unit-1"]',
        }

    def test_record_metadata_reaches_its_chunks(self, tmp_path: Path) -> None:
        from ragwright.chunkers import create_chunker
        from ragwright.models import Document

        options = ParserOptions(text_fields=("body",), meta_fields=("author", "year"))
        parsed = JsonParser(options).parse(
            build_jsonl(tmp_path / "n.jsonl").read_bytes(), "n.jsonl"
        )
        document = Document("d", "n.jsonl", parsed.content, parsed.metadata, parsed.sections)
        chunks = create_chunker("recursive", size=200, overlap=0).chunk(document)
        assert [(c.metadata["author"], c.metadata["year"]) for c in chunks] == [
            ("ada", 2020),
            ("grace", 2021),
            ("alan", 2022),
            ("ada", 2023),
            ("grace", 2020),
        ]
        assert all(f"pump {c.metadata['record'] - 1}." in c.text for c in chunks)

    def test_single_json_object_metadata_goes_to_the_document(self) -> None:
        options = ParserOptions(text_fields=("post.text",), meta_fields=("post.lang", "id"))
        data = b'{"id": 7, "post": {"text": "Hello there.", "lang": "en"}, "x": null}'
        doc = JsonParser(options).parse(data, "p.json")
        assert doc.content == "Hello there."
        assert doc.metadata == {"records": 1, "post.lang": "en", "id": 7}
        assert doc.content_type == "application/json"

    def test_json_array_of_objects_is_records(self) -> None:
        doc = JsonParser().parse(b'[{"a": {"b": [1, {"c": "deep"}]}}, {"a": 2}]', "x.json")
        assert doc.content == "Record 1\n\na.b[0]: 1\na.b[1].c: deep\n\nRecord 2\n\na: 2"

    def test_lines_split_only_at_line_feeds(self) -> None:
        data = '{"t": "a\u2028b\x85c"}\r\n{"t": "d"}'.encode()
        doc = JsonParser(ParserOptions(text_fields=("t",))).parse(data, "x.jsonl")
        assert doc.metadata["records"] == 2
        assert "a\nb\x85c" in doc.content  # U+2028 is a line break in the content

    def test_a_record_without_the_text_field_is_kept_whole(self) -> None:
        options = ParserOptions(text_fields=("body",))
        doc = JsonParser(options).parse(b'{"body": "one"}\n{"other": "two"}\n', "x.jsonl")
        assert "one" in doc.content and "other: two" in doc.content

    @pytest.mark.parametrize(
        ("data", "source", "message"),
        [
            (b'{"a": 1,}', "x.json", "invalid JSON at line 1"),
            (b'{"a": 1}\n\n{"b": \n', "x.jsonl", "invalid JSON on line 3"),
            (b"[" * 100_000 + b"]" * 100_000, "x.json", "nested too deeply"),
            (b"\x00\x01{}", "x.json", "binary"),
        ],
    )
    def test_bad_json_is_a_parse_error(self, data: bytes, source: str, message: str) -> None:
        with pytest.raises(ParseError, match=message):
            JsonParser().parse(data, source)

    def test_bad_field_names_are_refused(self) -> None:
        with pytest.raises(ConfigError):
            ParserOptions(text_fields=("",))

    def test_registry_builds_the_parser_with_the_options(self) -> None:
        options = ParserOptions(text_fields=("body",))
        parser = ParserRegistry.from_entry_points(options=options).parser_for("a.jsonl")
        assert isinstance(parser, JsonParser) and parser.options == options
        assert ParserRegistry.from_entry_points().parser_for("a.json").options == ParserOptions()


class TestParserOptionsThroughIngest:
    def test_cli_fields_reach_the_parser_and_changes_reparse(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import json

        from typer.testing import CliRunner

        from ragwright.cli import app

        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
        (tmp_path / "data").mkdir()
        build_jsonl(tmp_path / "data" / "notes.jsonl", records=6)
        (tmp_path / "data" / "readme.txt").write_text("Nothing about JSON here.")
        runner = CliRunner()

        def ingest(*flags: str) -> dict[str, object]:
            args = ["ingest", "data", "--embedder", "hashing", "--json", *flags]
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            report: dict[str, object] = json.loads(result.stdout)
            return report

        first = ingest("--text-field", "body", "--meta-field", "author", "--meta-field", "year")
        assert first["added"] == ["data/notes.jsonl", "data/readme.txt"]
        result = runner.invoke(
            app, ["search", "maintenance pump", "--filter", 'author = "grace"', "--json"]
        )
        hits = json.loads(result.stdout)["hits"]
        assert hits and all(hit["metadata"]["author"] == "grace" for hit in hits)
        assert "title:" not in hits[0]["text"]  # only the text field was written
        assert ingest()["unchanged"] == ["data/notes.jsonl", "data/readme.txt"]  # recorded
        changed = ingest("--text-field", "title")
        assert changed["updated"] == ["data/notes.jsonl"]  # only the file the options affect
        assert changed["unchanged"] == ["data/readme.txt"]


class TestRtf:
    def test_paragraphs_accents_and_info(self, tmp_path: Path) -> None:
        doc = RtfParser().parse(build_rtf(tmp_path / "m.rtf", 2).read_bytes(), "m.rtf")
        assert doc.content == (
            "Daily menu\n\n"
            "Paragraph 0 of the café menu lists crème brûlée.\n\n"
            "Paragraph 1 of the café menu lists crème brûlée."
        )
        assert doc.metadata == {"title": "Menu", "author": "Chef"}
        assert "Helvetica" not in doc.content  # the font table is no text
        assert_tiles(doc)

    def test_tables_are_pipe_rows(self, tmp_path: Path) -> None:
        path = build_rtf(tmp_path / "t.rtf", paragraphs=1, table_rows=2)
        doc = RtfParser().parse(path.read_bytes(), "t.rtf")
        assert doc.content.endswith(
            "brûlée.\n\n| Region | Product | Units | Revenue |\n| --- | --- | --- | --- |\n"
            "| North | anvil-0 | 1 | 0.25 |\n| South | bolt-1 | 4 | 12.75 |\n\nThat is all."
        )

    def test_code_page_is_honoured(self) -> None:
        data = b"{\\rtf1\\ansi\\ansicpg1251 \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2\\par}"
        assert RtfParser().parse(data, "r.rtf").content == "Привет"

    def test_binary_data_with_braces_is_skipped(self) -> None:
        data = b"{\\rtf1 before {\\*\\objdata \\bin4 }{{}} after\\par}"
        assert RtfParser().parse(data, "r.rtf").content == "before  after"

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (b"Just text, not RTF.", "does not start with"),
            (b"{\\rtf1\\ansi {\\b bold\\par", "never closed"),
            (b"{\\rtf1 text}}", "after the document's last brace"),
            (b"{\\rtf1 text} trailing", "after the document's last brace"),
        ],
    )
    def test_bad_rtf_is_a_parse_error(self, data: bytes, message: str) -> None:
        with pytest.raises(ParseError, match=message):
            RtfParser().parse(data, "bad.rtf")


def test_docx_content_controls_and_custom_heading_styles_are_read(tmp_path: Path) -> None:
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement

    document = docx.Document()
    custom = document.styles.add_style("Chapter Title", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 1"]
    document.add_paragraph("Custom heading", style="Chapter Title")
    inside = document.add_paragraph("Text inside a content control.")
    control, content = OxmlElement("w:sdt"), OxmlElement("w:sdtContent")
    control.append(content)
    inside._p.addprevious(control)
    content.append(inside._p)
    document.add_paragraph("After it.")
    document.save(tmp_path / "c.docx")
    doc = DocxParser().parse((tmp_path / "c.docx").read_bytes(), "c.docx")
    assert doc.content == "Custom heading\n\nText inside a content control.\n\nAfter it."
    assert doc.sections[0].heading_path == ("Custom heading",)


def test_a_mixed_folder_ingests_the_good_files_and_reports_the_bad(tmp_path: Path) -> None:
    from ragwright import Index
    from ragwright.testing import HashingEmbedder

    folder = tmp_path / "mixed"
    folder.mkdir()
    build_docx(folder / "manual.docx")
    build_pptx(folder / "deck.pptx")
    build_xlsx(folder / "sales.xlsx")
    build_csv(folder / "sales.csv")
    build_jsonl(folder / "notes.jsonl")
    build_rtf(folder / "menu.rtf")
    truncated = build_docx(tmp_path / "whole.docx").read_bytes()
    (folder / "truncated.docx").write_bytes(truncated[: len(truncated) // 3])
    build_zip_bomb(folder / "bomb.xlsx", inflated_mb=4)
    build_billion_laughs_docx(folder / "laughs.docx")
    (folder / "fake.pptx").write_text("not a presentation")
    (folder / "broken.rtf").write_text("{\\rtf1 never closed")

    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        report = index.ingest([folder])
        failed = {Path(f.source).name: f.reason for f in report.failed}
        assert sorted(Path(source).name for source in report.added) == [
            "deck.pptx",
            "manual.docx",
            "menu.rtf",
            "notes.jsonl",
            "sales.csv",
            "sales.xlsx",
        ]
        assert sorted(failed) == [
            "bomb.xlsx",
            "broken.rtf",
            "fake.pptx",
            "laughs.docx",
            "truncated.docx",
        ]
        assert "max_ratio" in failed["bomb.xlsx"]
        assert "DTD" in failed["laughs.docx"]
        assert "not a zip archive" in failed["fake.pptx"]
        assert "corrupt zip archive" in failed["truncated.docx"]
        slide = index.search("audience of topic 2", mode="bm25", top_k=1)[0]
        assert slide.source.endswith("deck.pptx") and slide.chunk.metadata["page"] == 2
        row = index.search("Product dynamo-3", mode="bm25", where='filename = "sales.xlsx"')[0]
        assert "| West | dynamo-3 | 10 | 37.75 |" in row.chunk.text
        assert row.chunk.metadata["breadcrumb"] == "Sales"


@pytest.mark.parametrize(
    ("parser", "module"),
    [(DocxParser, "docx"), (PptxParser, "pptx"), (XlsxParser, "openpyxl"), (RtfParser, "striprtf")],
)
def test_a_missing_extra_names_its_install_line(
    parser: Any, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragwright.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragwright\[office\]'"):
        parser()
