"""Excel workbooks (.xlsx, .xlsm): one section per sheet, each sheet one table.

Read with openpyxl in read-only mode, which streams each sheet's rows from the archive, after
the package passes the checks in `ragwright.parsers._ooxml`. The columns that hold values must
be known before the table is written, so a sheet's rows are read once and held when the sheet
is small (`KEPT_CELLS`); a larger sheet is read twice, row by row (once to find the columns,
once to write the table), so memory holds the text produced and one row, never the sheet.
Formulas give their cached values (what Excel last computed and saved); a formula never
calculated by a spreadsheet program has no value.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ragwright.errors import ParseError
from ragwright.models import ParsedDocument
from ragwright.parsers._builder import TextBuilder
from ragwright.parsers._office import require_office
from ragwright.parsers._ooxml import ArchiveLimits, open_package
from ragwright.parsers._properties import core_properties
from ragwright.parsers._tables import column_names, data_columns, pick

if TYPE_CHECKING:
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

#: A sheet with at most this many cells is read once and held; a larger one is read twice.
KEPT_CELLS = 250_000


class XlsxParser:
    """Reads Excel workbooks: a section per non-empty sheet, headed by the sheet's name.

    The first row with a value is the sheet's header; every row is a table row under it (see
    ``docs/formats.md``). Metadata: ``title``, ``author``, ``created``, ``modified`` from the
    document properties, and ``sheets`` (the number of sheets with content).
    """

    extensions: tuple[str, ...] = (".xlsx", ".xlsm")
    content_types: tuple[str, ...] = (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.ms-excel.sheet.macroEnabled.12",
    )

    def __init__(self, limits: ArchiveLimits | None = None) -> None:
        require_office("openpyxl", "the XLSX parser")
        self.limits = limits or ArchiveLimits()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        import openpyxl

        open_package(data, source, self.limits).close()
        try:
            workbook = openpyxl.load_workbook(
                io.BytesIO(data), read_only=True, data_only=True, keep_links=False
            )
        except Exception as error:  # openpyxl raises many kinds for a broken workbook
            raise ParseError(source, f"not a readable Excel workbook: {error}") from error
        builder = TextBuilder()
        sheets = 0
        try:
            for sheet in workbook.worksheets:
                sheets += _write_sheet(builder, sheet)
            metadata = core_properties(workbook.properties)
        except Exception as error:
            raise ParseError(source, f"cannot read the workbook: {error}") from error
        finally:
            workbook.close()
        metadata["sheets"] = sheets
        return builder.build(metadata, self.content_types[0])


def _write_sheet(builder: TextBuilder, sheet: ReadOnlyWorksheet) -> bool:
    """Write one sheet as a heading and a table; False (nothing written) for an empty sheet."""
    kept = _Kept()
    columns, count = data_columns(kept.keep(_rows(sheet)))
    if not count:
        return False
    rows = (pick(row, columns) for row in (kept.rows if kept.rows is not None else _rows(sheet)))
    builder.heading(sheet.title, level=1)
    builder.table(column_names(next(rows), columns), rows)
    return True


class _Kept:
    """The rows of the first pass over a sheet, kept while they hold at most `KEPT_CELLS`
    cells, so a sheet of that size is read once; a larger one is read again instead."""

    def __init__(self) -> None:
        self.rows: list[list[str]] | None = []
        self._cells = 0

    def keep(self, rows: Iterator[list[str]]) -> Iterator[list[str]]:
        for row in rows:
            if self.rows is not None:
                self._cells += len(row)
                if self._cells <= KEPT_CELLS:
                    self.rows.append(row)
                else:
                    self.rows = None  # too big to hold: the second pass streams
            yield row


def _rows(sheet: ReadOnlyWorksheet) -> Iterator[list[str]]:
    """The sheet's rows with a value, as cell texts."""
    # Rows as stored, not padded to the sheet's declared size: some files declare the whole
    # grid (A1:XFD1048576), which would make every row 16,384 cells wide.
    sheet.reset_dimensions()
    for values in sheet.iter_rows(values_only=True):
        row = [cell_text(value) for value in values]
        if any(cell.strip() for cell in row):
            yield row


def cell_text(value: Any) -> str:
    """A cell value as text: numbers without a spurious ``.0``, dates in ISO 8601."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)
