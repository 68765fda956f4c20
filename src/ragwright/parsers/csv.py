"""CSV and TSV: one table, every row under its column headers.

The first non-empty row is the header. Rows with no value, and columns with no value under
the header, are left out; a blank
header cell is named after its position (``column 3``). The table is rendered as pipe rows
(see `ragwright.parsers._tables`), so chunks of it carry the header (see ``docs/formats.md``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder
from ragwright.parsers._tables import column_names, data_columns, pick
from ragwright.parsers._text import decode, iter_lines

#: How much of the file the dialect sniffer reads.
SNIFF_CHARS = 64 * 1024
_DELIMITERS = ",;\t|"


class CsvParser:
    """Reads ``.csv`` and ``.tsv``: encoding detected like any text file, dialect sniffed.

    Metadata: ``rows`` (data rows, the header not counted), ``columns`` and ``delimiter``.
    """

    extensions: tuple[str, ...] = (".csv", ".tsv")
    content_types: tuple[str, ...] = ("text/csv", "text/tab-separated-values")

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        text, warnings = decode(data, source)
        dialect = _dialect(text, tab=source.lower().endswith(".tsv"))
        builder = TextBuilder()
        try:
            columns, count = data_columns(_rows(text, dialect))
            rows = (pick(row, columns) for row in _rows(text, dialect))
            header = next(rows, None)
            if header is not None:
                builder.table(column_names(header, columns), rows)
        except csv.Error as error:
            raise ParseError(source, f"malformed CSV: {error}") from error
        metadata: dict[str, Any] = {
            "rows": max(count - 1, 0),
            "columns": len(columns),
            "delimiter": dialect.delimiter,
        }
        return builder.build(metadata, "text/csv", warnings)


def _dialect(text: str, tab: bool) -> type[csv.Dialect] | csv.Dialect:
    if tab:
        return csv.excel_tab
    sample = text[:SNIFF_CHARS]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:  # one column, or too little text to tell: the common case is commas
        return csv.excel


def _rows(text: str, dialect: type[csv.Dialect] | csv.Dialect) -> Iterator[list[str]]:
    """Rows with a value; stray carriage returns normalized away inside quoted cells."""
    for row in csv.reader(iter_lines(text), dialect):
        if any(cell.strip() for cell in row):
            yield row
