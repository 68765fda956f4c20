"""Pipe tables in a document's content, so chunkers cut them only between rows.

Every parser writes tables as pipe rows (a header line, a separator line, one line per row; see
`ragwright.parsers._tables`), and Markdown files may hold them as written. A table here is a
line containing ``|`` followed by a separator line (``| --- | :-: |``), then the lines up to the
first blank line or line without ``|``.

Chunkers treat the header block (header, separator and first row) and each later row as units no
cut may fall inside, unless a single unit is longer than a chunk. A chunk that starts inside a
table's rows carries the header block's first two lines as ``table_header`` metadata, which is
prepended wherever the chunk's text is embedded, indexed or shown (`Chunk.indexed_text`).

A header is made once per table and every chunk that continues the table holds that one
string; a header line longer than `MAX_CARRIED_HEADER` is carried cut after its last whole
column that fits (the separator line cut to as many columns). Uncut, a table 200,000 columns
wide had every one of its thousands of chunks carry megabytes of header into memory, the
database and the BM25 index: quadratic in the file's size.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

Span = tuple[int, int]

#: The longest header line a chunk carries whole (characters); far wider than any table a
#: reader follows, and about one embedding window.
MAX_CARRIED_HEADER = 2_000

#: ``| --- | :-: |``: cells of dashes (colons at their ends) between pipes, outer pipes optional.
#: The repetition is possessive: a plain one keeps a backtracking entry per cell, 78 MB for the
#: separator line of a table 200,000 columns wide.
_CELL = r"[ \t]*+:?-++:?[ \t]*+"
_SEPARATOR = re.compile(rf"[ \t]*\|?{_CELL}(?:\|{_CELL})*+\|?[ \t]*")


class Spans(Sequence[Span]):
    """Line spans as two arrays of int64: 16 bytes a line, where a tuple of two ints took
    about 100 (a CSV of 111,400 rows: 12.6 MB of tuples, 1.6 times the file)."""

    __slots__ = ("ends", "starts")

    def __init__(self, starts: array[int] | None = None, ends: array[int] | None = None) -> None:
        self.starts = array("q") if starts is None else starts
        self.ends = array("q") if ends is None else ends

    def append(self, span: Span) -> None:
        self.starts.append(span[0])
        self.ends.append(span[1])

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> Span: ...
    @overload
    def __getitem__(self, index: slice) -> Spans: ...
    def __getitem__(self, index: int | slice) -> Span | Spans:
        if isinstance(index, slice):
            return Spans(self.starts[index], self.ends[index])
        return self.starts[index], self.ends[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Spans):
            return NotImplemented
        return self.starts == other.starts and self.ends == other.ends

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list


@dataclass(frozen=True, slots=True, eq=False)
class Table:
    """Where a table sits: its header and separator lines, and each row's line."""

    start: int
    header_end: int  # the end of the separator line
    rows: Spans

    @property
    def end(self) -> int:
        return self.rows.ends[-1] if self.rows else self.header_end


def find_tables(text: str, start: int, end: int) -> list[Table]:
    """The pipe tables in ``text[start:end]``, in order."""
    if text.find("|", start, end) < 0:
        return []
    lines = _lines(text, start, end)
    tables: list[Table] = []
    index = 0
    while index + 1 < len(lines):
        header, separator = lines[index], lines[index + 1]
        if not (_has_pipe(text, header) and _is_separator(text, separator)):
            index += 1
            continue
        first = index = index + 2
        while index < len(lines) and _has_pipe(text, lines[index]):
            index += 1
        tables.append(Table(header[0], separator[1], lines[first:index]))
    return tables


class Units:
    """Sorted, non-overlapping spans that cuts avoid; answers "is this position inside one?"."""

    def __init__(self, tables: list[Table]) -> None:
        # The header block with the first row is one unit, then each further row.
        self.starts, self.ends = array("q"), array("q")
        for table in tables:
            rows = table.rows
            self.starts.append(table.start)
            self.ends.append(rows.ends[0] if rows else table.header_end)
            self.starts.extend(rows.starts[1:])
            self.ends.extend(rows.ends[1:])

    def __bool__(self) -> bool:
        return bool(self.starts)

    def inside(self, position: int) -> bool:
        """True when a cut at ``position`` would split a unit (its ends are fine)."""
        index = bisect_right(self.starts, position) - 1
        return index >= 0 and self.starts[index] < position < self.ends[index]


def header_for(tables: list[Table], text: str, start: int) -> Table | None:
    """The table whose rows a chunk starting at ``start`` begins in; None when it starts
    outside every table's rows."""
    for table in tables:
        if table.header_end <= start < table.end:
            return table
    return None


def carried_header(text: str, table: Table, limit: int = MAX_CARRIED_HEADER) -> str | None:
    """The header and separator lines a chunk continuing ``table`` carries: both whole, or,
    for a header line longer than ``limit``, both cut after the last column boundary that
    keeps the header line within it (None when not even one column fits)."""
    newline = text.find("\n", table.start, table.header_end)
    if newline < 0 or newline - table.start <= limit:
        return text[table.start : table.header_end]
    header = text[table.start : table.start + limit]
    pipes = [match.end() for match in _CELL_BOUNDARY.finditer(header)]
    columns = len(pipes) - _leading_pipe(header)
    separator = text[newline + 1 : table.header_end]
    separator_pipes = [match.end() for match in re.finditer(r"\|", separator)]
    kept = columns + _leading_pipe(separator)
    if columns < 1 or len(separator_pipes) < kept:
        return None
    return header[: pipes[-1]] + "\n" + separator[: separator_pipes[kept - 1]]


def _leading_pipe(line: str) -> int:
    return 1 if line.lstrip().startswith("|") else 0


def rows_with_headers(
    text: str, carried_header: str | None = None
) -> tuple[dict[Span, str], list[Span]]:
    """Each table row line of a chunk's ``text`` (its span in ``text``) with the header line
    it sits under: the rows of every table in the text, and, for a chunk that starts among a
    table's rows, its first lines under the header it carries (``table_header``). Also the
    header block (header and separator lines) of each table in the text, from the same pass."""
    found: dict[Span, str] = {}
    if carried_header:
        header = carried_header.split("\n", 1)[0]
        for line in _lines(text, 0, len(text)):
            if not _has_pipe(text, line):
                break
            found[line] = header
    blocks: list[Span] = []
    for table in find_tables(text, 0, len(text)):
        header = text[table.start : text.index("\n", table.start)].rstrip()
        for row in table.rows:
            found[row] = header
        blocks.append((table.start, table.header_end))
    return found, blocks


_CELL_BOUNDARY = re.compile(r"(?<!\\)\|")


def cells(line: str) -> list[str]:
    """A pipe row's cells, outer pipes dropped and ``\\|`` unescaped."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in _CELL_BOUNDARY.split(inner)]


def row_with_header(row: str, header: str) -> str:
    """A row read with its column names: ``Region: East; Units: 22`` (empty cells left out,
    a cell without a column name as it is)."""
    names = cells(header)
    parts = []
    for index, value in enumerate(cells(row)):
        name = names[index] if index < len(names) else ""
        if value:
            parts.append(f"{name}: {value}" if name else value)
    return "; ".join(parts)


def _lines(text: str, start: int, end: int) -> Spans:
    """Each line of ``text[start:end]`` as a span without its line break and trailing blanks;
    blank lines included (they end tables)."""
    spans = Spans()
    position = start
    while position < end:
        newline = text.find("\n", position, end)
        line_end = end if newline < 0 else newline
        trimmed = line_end
        while trimmed > position and text[trimmed - 1] in " \t\r":
            trimmed -= 1
        spans.append((position, trimmed))
        position = line_end + 1
    return spans


def _has_pipe(text: str, line: Span) -> bool:
    return text.find("|", *line) >= 0


def _is_separator(text: str, line: Span) -> bool:
    return _has_pipe(text, line) and _SEPARATOR.fullmatch(text, *line) is not None
