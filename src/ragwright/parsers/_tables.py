"""Tables as text: Markdown-style pipe rows under a header line and a separator line.

Every format with tables (CSV, XLSX, DOCX, PPTX, HTML, RTF) renders them this one way, so the
chunkers can find any table in a document's content, cut it only between rows, and give each
piece the header it continues (see `ragwright.chunkers._tables`)::

    | Region | Sales |
    | --- | --- |
    | EU | 10 |
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

#: What a cell's ``|`` becomes, so a cell never splits into two.
ESCAPED_PIPE = "\\|"


def cell_text(value: str) -> str:
    """One table cell: whitespace (line breaks included) collapsed, pipes escaped."""
    return " ".join(value.split()).replace("|", ESCAPED_PIPE)


def row_line(cells: Sequence[str]) -> str:
    """``| a | b |``; cells are escaped here. An empty cell leaves its place empty."""
    return "| " + " | ".join(cell_text(cell) for cell in cells) + " |"


def separator_line(columns: int) -> str:
    return "|" + " --- |" * columns


def table_lines(header: Sequence[str], rows: Iterable[Sequence[str]]) -> Iterator[str]:
    """The header line, the separator line, then one line per row, each as wide as the header
    (short rows are padded with empty cells, long ones widen nothing: extra cells are kept)."""
    width = len(header)
    yield row_line(header)
    yield separator_line(width)
    for row in rows:
        cells = list(row)
        if len(cells) < width:
            cells.extend([""] * (width - len(cells)))
        yield row_line(cells)


def column_names(header: Sequence[str], columns: Sequence[int]) -> list[str]:
    """Header cells, with a blank one named after its position in the file (``column 3``;
    ``columns`` are the 0-based positions), so every value in a row has a name."""
    return [
        name.strip() or f"column {column + 1}" for name, column in zip(header, columns, strict=True)
    ]


def data_columns(rows: Iterable[Sequence[str]]) -> tuple[list[int], int]:
    """The columns worth keeping in a table whose first row is the header: those with a value
    under the header (all of the header's, when there is no row under it); and the row count,
    header included. A flag per column, not a set: a row 200,000 cells wide took sets of 16 MB."""
    header = bytearray()
    used = bytearray()
    count = 0
    for row in rows:
        flags = used if count else header
        if len(flags) < len(row):
            flags.extend(bytes(len(row) - len(flags)))
        for index, cell in enumerate(row):
            if cell.strip():
                flags[index] = 1
        count += 1
    chosen = used if count > 1 else header
    return [index for index, flag in enumerate(chosen) if flag], count


def pick(row: Sequence[str], columns: Sequence[int]) -> list[str]:
    """The cells of ``row`` at ``columns`` (missing cells are empty)."""
    return [row[index] if index < len(row) else "" for index in columns]
