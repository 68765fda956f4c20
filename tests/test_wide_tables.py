"""Very wide tables: a chunk carries a bounded header, one string per table, and ingesting a
CSV of 100,000 columns keeps peak memory within a few times the file, as does a long CSV's parse
(issue 31, item 8).

Before, every chunk of such a table carried the whole header line (megabytes) in its metadata:
memory, the database and the BM25 index grew with the square of the file's size."""

from __future__ import annotations

import csv
import io
import tracemalloc
from pathlib import Path

import pytest

from peak_memory import ALLOWANCE, MB, baseline_peak, ingest_in_child
from ragwright import Index
from ragwright.chunkers import create_chunker
from ragwright.chunkers._tables import MAX_CARRIED_HEADER, carried_header, cells, find_tables
from ragwright.models import TABLE_HEADER, Document
from ragwright.parsers._text import iter_lines
from ragwright.parsers.csv import CsvParser
from ragwright.testing import HashingEmbedder


def wide_csv(columns: int) -> bytes:
    header = ",".join(f"c{index}" for index in range(columns))
    return f"{header}\n{','.join('1' for _ in range(columns))}\n".encode()


def test_a_short_header_is_carried_whole() -> None:
    content = "| a | b |\n| --- | :-: |\n| 1 | 2 |"
    [table] = find_tables(content, 0, len(content))
    assert carried_header(content, table) == "| a | b |\n| --- | :-: |"


@pytest.mark.parametrize(
    ("header", "separator", "expected"),
    [
        ("| aa | bb | cc | dd |", "| --- | --- | --- | --- |", "| aa | bb |\n| --- | --- |"),
        ("aa | bb | cc | dd", "--- | --- | --- | ---", "aa | bb |\n--- | --- |"),
        # An escaped pipe is inside a cell, not a boundary.
        ("| a\\|b | cc | dd |", "|---|---|---|", "| a\\|b |\n|---|"),
    ],
)
def test_a_long_header_is_cut_after_a_whole_column(
    header: str, separator: str, expected: str
) -> None:
    content = f"{header}\n{separator}\n| 1 | 2 | 3 | 4 |"
    [table] = find_tables(content, 0, len(content))
    carried = carried_header(content, table, limit=12)
    assert carried == expected
    names, dashes = carried.split("\n")
    assert len(cells(names)) == len(cells(dashes))


def test_a_header_whose_first_column_is_too_long_is_not_carried() -> None:
    content = f"| {'x' * 40} | b |\n| --- | --- |\n| 1 | 2 |"
    [table] = find_tables(content, 0, len(content))
    assert carried_header(content, table, limit=12) is None


def test_the_chunks_of_a_wide_table_share_one_bounded_header() -> None:
    parsed = CsvParser().parse(wide_csv(20_000), "wide.csv")
    document = Document("d", "wide.csv", parsed.content)
    chunks = create_chunker("recursive", size=1000, overlap=100).chunk(document)
    carried = [chunk.metadata[TABLE_HEADER] for chunk in chunks if TABLE_HEADER in chunk.metadata]
    assert len(carried) > 50
    first = carried[0]
    assert all(header is first for header in carried)  # one string, not a copy per chunk
    names, separator = first.split("\n")
    assert len(names) <= MAX_CARRIED_HEADER
    assert cells(names) == [f"c{index}" for index in range(len(cells(names)))]
    assert len(cells(separator)) == len(cells(names))
    assert document.content.startswith(names)
    for chunk in chunks:
        assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        if TABLE_HEADER in chunk.metadata:
            assert chunk.indexed_text == f"{first}\n{chunk.text}"


def test_finding_a_wide_table_takes_no_memory_per_column() -> None:
    # The separator check kept a backtracking entry per cell: 78 MB for 200,000 columns.
    content = CsvParser().parse(wide_csv(200_000), "wide.csv").content
    tracemalloc.start()
    try:
        [table] = find_tables(content, 0, len(content))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table.rows and peak < MB


def test_ingesting_a_wide_csv_stays_within_four_times_the_file(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    data = wide_csv(100_000)  # 0.9 MB; its header line is 0.8 MB
    wide.write_bytes(data)
    baseline = baseline_peak(tmp_path)
    measured = ingest_in_child(wide, tmp_path / "index")
    assert measured["failed"] == {} and measured["added"] == ["wide.csv"]
    assert measured["peak"] <= baseline + 4 * len(data) + ALLOWANCE, measured["peak"] / MB
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as kb:
        [document] = kb.documents.list()
        chunks = kb.documents.chunks_of(document.id)
    headers = [c.metadata[TABLE_HEADER] for c in chunks if TABLE_HEADER in c.metadata]
    assert len(headers) > 200
    assert max(len(header) for header in headers) < 3 * MAX_CARRIED_HEADER


@pytest.mark.parametrize(
    "text",
    [
        "a,b\r\n1,2\r\n",
        'a,b\n1,"x\ny"\n3,4',
        "a,b\r1,2\r3,4",
        "a,b\n\n1,2\n",
        "a",
        'a,"q\r\nz",c\r\nd,e,f',
    ],
)
def test_the_lines_csv_reads_split_as_universal_newlines_do(text: str) -> None:
    assert list(csv.reader(iter_lines(text))) == list(csv.reader(io.StringIO(text, newline="")))
    jsonl = list(iter_lines(text, universal=False))
    assert jsonl == list(io.StringIO(text, newline="\n"))


def test_parsing_a_csv_takes_a_few_times_the_file_not_a_copy_at_four_bytes_a_character() -> None:
    # io.StringIO copied the text as UCS-4 first: 7.35x the file at peak, 4.47x without it.
    rows = ["id,name,notes", *(f"{i},n{i},{'word ' * 8}" for i in range(60_000))]
    data = ("\n".join(rows) + "\n").encode()
    tracemalloc.start()
    try:
        parsed = CsvParser().parse(data, "long.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parsed.metadata["rows"] == 60_000
    assert peak < 5.5 * len(data), peak / len(data)
