"""Tables everywhere: no chunker separates a row from its header, and search finds a row by
its column name and value, for tables from every format that has them (PDF: ruled tables)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from office_files import (
    SALES_HEADER,
    build_csv,
    build_docx,
    build_pptx,
    build_rtf,
    build_xlsx,
    sales_rows,
)
from pdf_files import build_table_pdf
from ragwright import Index
from ragwright.chunkers import create_chunker
from ragwright.models import TABLE_HEADER, Chunk, Document, ParsedDocument
from ragwright.parsers.csv import CsvParser
from ragwright.parsers.docx import DocxParser
from ragwright.parsers.html import HtmlParser
from ragwright.parsers.markdown import MarkdownParser
from ragwright.parsers.pdf import PdfParser
from ragwright.parsers.pptx import PptxParser
from ragwright.parsers.rtf import RtfParser
from ragwright.parsers.xlsx import XlsxParser
from ragwright.ports import Chunker
from ragwright.testing import HashingEmbedder

HEADER_LINE = "| Region | Product | Units | Revenue |"
ROWS = 30


def markdown_file(path: Path) -> Path:
    rows = "\n".join(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} |" for r in sales_rows(ROWS))
    path.write_text(
        "# Sales\n\nThe table lists every sale of the quarter.\n\n"
        f"{HEADER_LINE}\n|--------|:-------:|------:|---|\n{rows}\n\nThat is all.\n",
        encoding="utf-8",
    )
    return path


def html_file(path: Path) -> Path:
    cells = "".join(
        "<tr>" + "".join(f"<td>{value}</td>" for value in row) + "</tr>" for row in sales_rows(ROWS)
    )
    head = "".join(f"<th>{name}</th>" for name in SALES_HEADER)
    path.write_text(
        f"<h1>Sales</h1><p>Every sale.</p><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{cells}</tbody></table><p>That is all.</p>",
        encoding="utf-8",
    )
    return path


def pdf_file(path: Path) -> Path:
    build_table_pdf(path / "t.pdf", SALES_HEADER, sales_rows(ROWS))  # ruled, on one page
    return path / "t.pdf"


FORMATS: dict[str, tuple[Callable[[Path], Path], object]] = {
    "csv": (lambda p: build_csv(p / "t.csv", rows=ROWS), CsvParser),
    "xlsx": (lambda p: build_xlsx(p / "t.xlsx", rows=ROWS), XlsxParser),
    "docx": (lambda p: build_docx(p / "t.docx", sections=1, table_rows=ROWS), DocxParser),
    "pptx": (lambda p: build_pptx(p / "t.pptx", slides=1, table_rows=ROWS), PptxParser),
    "html": (lambda p: html_file(p / "t.html"), HtmlParser),
    "markdown": (lambda p: markdown_file(p / "t.md"), MarkdownParser),
    "rtf": (lambda p: build_rtf(p / "t.rtf", paragraphs=2, table_rows=ROWS), RtfParser),
    "pdf": (pdf_file, lambda: PdfParser(ocr="off")),
}

CHUNKERS: dict[str, Callable[[], Chunker]] = {
    "recursive": lambda: create_chunker("recursive", size=220, overlap=50),
    "fixed": lambda: create_chunker("fixed", size=220, overlap=50),
    "paragraph": lambda: create_chunker("paragraph", max_size=220),
    "markdown": lambda: create_chunker("markdown", max_size=220),
    "recursive-tokens": lambda: create_chunker(
        "recursive", size=2000, overlap=0, token_counter=HashingEmbedder(max_tokens=90)
    ),
}


def parse(fmt: str, tmp_path: Path) -> Document:
    build, parser_class = FORMATS[fmt]
    path = build(tmp_path)
    parsed: ParsedDocument = parser_class().parse(path.read_bytes(), path.name)  # type: ignore[operator]
    return Document("d", path.name, parsed.content, parsed.metadata, parsed.sections)


def table_rows(content: str) -> tuple[str, list[tuple[int, int]]]:
    """The header block (header and separator lines) and each body row's span."""
    start = content.index(HEADER_LINE)
    separator_end = content.index("\n", start + len(HEADER_LINE) + 1)
    rows, position = [], separator_end + 1
    while position < len(content) and content.startswith("|", position):
        end = content.find("\n", position)
        end = len(content) if end < 0 else end
        rows.append((position, end))
        position = end + 1
    return content[start:separator_end], rows


def assert_headers_travel_with_rows(document: Document, chunks: list[Chunk]) -> None:
    content = document.content
    header, rows = table_rows(content)
    header_start = content.index(HEADER_LINE)
    assert len(rows) == ROWS
    for chunk in chunks:
        assert content[chunk.char_start : chunk.char_end] == chunk.text
        for start, end in rows:  # no cut inside a row
            assert not start < chunk.char_start < end, chunk.text
            assert not start < chunk.char_end < end, chunk.text
        assert not header_start < chunk.char_end < rows[0][1], "header cut from its first row"
        holds_row = any(chunk.char_start <= s and e <= chunk.char_end for s, e in rows)
        if holds_row and chunk.char_start > header_start:
            assert chunk.metadata[TABLE_HEADER] == header
            assert chunk.indexed_text == f"{header}\n{chunk.text}"
        elif holds_row:
            assert TABLE_HEADER not in chunk.metadata
            assert chunk.text[chunk.text.index(HEADER_LINE) :].startswith(header)
    for start, end in rows:  # every row whole in some chunk
        assert any(c.char_start <= start and end <= c.char_end for c in chunks)
    assert sum(TABLE_HEADER in chunk.metadata for chunk in chunks) >= 2, "table was not split"


@pytest.mark.parametrize("chunker_name", list(CHUNKERS))
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_chunk_of_a_table_carries_its_header(
    fmt: str, chunker_name: str, tmp_path: Path
) -> None:
    document = parse(fmt, tmp_path)
    chunks = CHUNKERS[chunker_name]().chunk(document)
    assert_headers_travel_with_rows(document, chunks)


@pytest.mark.parametrize("chunker_name", list(CHUNKERS))
def test_a_row_longer_than_a_chunk_is_still_cut(chunker_name: str) -> None:
    long_cell = " ".join(f"word{index}" for index in range(120))
    content = f"| a | b |\n| --- | --- |\n| 1 | short |\n| 2 | {long_cell} |\n| 3 | end |"
    document = Document("d", "t.md", content)
    chunks = CHUNKERS[chunker_name]().chunk(document)
    for chunk in chunks:
        assert content[chunk.char_start : chunk.char_end] == chunk.text
        assert len(chunk.text) <= 220 or chunker_name == "recursive-tokens"
    covered = "".join(content[c.char_start : c.char_end] for c in chunks)
    assert "word119" in covered and "| 3 | end |" in covered
    assert all(c.metadata.get(TABLE_HEADER) == "| a | b |\n| --- | --- |" for c in chunks[1:])


def test_text_without_tables_chunks_as_before() -> None:
    content = "One | two is not a table.\n\nA line with a pipe | here.\n---\nnor is this."
    chunks = create_chunker("recursive", size=30, overlap=0).chunk(Document("d", "t", content))
    assert all(TABLE_HEADER not in chunk.metadata for chunk in chunks)


class TestSearchFindsRowsByHeader:
    """The value 4711 sits deep in two tables; only the header says which is which."""

    @pytest.fixture
    def index(self, tmp_path: Path) -> Index:
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        filler = "\n".join(f"Town{index},{1000 + index}" for index in range(60))
        (corpus / "cities.csv").write_text(f"City,Population\n{filler}\nHamlet,4711\n")
        goods = "\n".join(f"Item{index},{2000 + index}" for index in range(60))
        (corpus / "goods.csv").write_text(f"Product,Price\n{goods}\nWidget,4711\n")
        index = Index(tmp_path / "index", embedder=HashingEmbedder())
        report = index.ingest([corpus], chunking=_chunking(size=200, overlap=0))
        assert report.ok and len(report.added) == 2
        return index

    @pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
    def test_header_word_and_value_find_the_row(self, index: Index, mode: str) -> None:
        with index:
            population = index.search("Population 4711", mode=mode, top_k=1)[0]
            price = index.search("Price 4711", mode=mode, top_k=1)[0]
        assert population.source.endswith("cities.csv")
        assert "| Hamlet | 4711 |" in population.chunk.text
        assert "Population" not in population.chunk.text  # found through its header
        assert population.chunk.metadata[TABLE_HEADER].startswith("| City | Population |")
        assert price.source.endswith("goods.csv")
        assert "| Widget | 4711 |" in price.chunk.text


def _chunking(**options: int) -> object:
    from ragwright import ChunkingConfig

    return ChunkingConfig("recursive", dict(options))


def test_an_index_with_the_first_triggers_upgrades_them(tmp_path: Path) -> None:
    import sqlite3

    from ragwright.stores.sqlite import SQLiteStore

    SQLiteStore(tmp_path).close()
    database = tmp_path / "index.sqlite3"
    with sqlite3.connect(database) as db:  # as schema 1 first created them
        db.executescript(
            "DROP TRIGGER chunks_fts_add; DROP TRIGGER chunks_fts_remove;"
            "DROP TABLE chunks_fts; DROP VIEW chunks_indexed;"
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', "
            "content_rowid='rowid');"
            "CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN "
            "INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text); END;"
            "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        )
    SQLiteStore(tmp_path).close()
    with sqlite3.connect(database) as db:
        triggers = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
    assert {t for t in triggers if "fts" in t} == {"chunks_fts_add", "chunks_fts_remove"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a | b\n--|--\n1 | 2\n3 | 4\n\nafter", [(0, 11, 2)]),  # no outer pipes
        ("| a |\n| :-: |\n| 1 |", [(0, 13, 1)]),  # one column, alignment colons
        ("| a | b |\n| --- | --- |", [(0, 23, 0)]),  # a header alone
        ("Title\n-----\n| not | a table |", []),  # a setext underline has no pipe
        ("| a | b |\n| x | y |", []),  # no separator line
    ],
)
def test_find_tables(text: str, expected: list[tuple[int, int, int]]) -> None:
    from ragwright.chunkers._tables import find_tables

    found = find_tables(text, 0, len(text))
    assert [(t.start, t.header_end, len(t.rows)) for t in found] == expected


def test_search_shows_the_header_with_a_continuing_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from ragwright.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    build_csv(tmp_path / "sales.csv", rows=ROWS)
    runner = CliRunner()
    args = ["ingest", "sales.csv", "--embedder", "hashing", "--chunk-size", "200"]
    assert runner.invoke(app, args).exit_code == 0
    result = runner.invoke(app, ["search", "gear-25", "--mode", "bm25", "--top-k", "1"])
    assert result.exit_code == 0, result.output
    assert "Region · Product · Units · Revenue" in result.output  # the header, read as text
    assert "gear-25" in result.output


def test_an_answer_prompt_gives_a_continuing_row_its_header() -> None:
    from ragwright.llms.prompt import Prompter, numbered
    from ragwright.models import Arm, Hit, Scale

    header = "| City | Population |\n| --- | --- |"
    chunk = Chunk("c", "d", 3, "| Hamlet | 4711 |", 900, 917, {TABLE_HEADER: header})
    hit = Hit(chunk, 1.0, Scale.RANK, frozenset({Arm.BM25}), source="cities.csv")
    messages = Prompter().messages("Answer.", "How many live in Hamlet?", numbered([hit]), "Go.")
    assert f"{header}\n| Hamlet | 4711 |" in messages[-1].content
