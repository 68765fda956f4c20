"""Span arithmetic shared by the chunkers.

Chunkers never build strings: they choose ``(start, end)`` offsets into ``document.content`` and
the text is sliced from it at the end, so ``content[start:end] == chunk.text`` holds by
construction. Cuts prefer the strongest boundary available: paragraph, line, sentence, clause,
word; a cut inside a word happens only when a single word is longer than the budget.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from ragwright.chunkers._tables import Table, Units, carried_header, find_tables, header_for
from ragwright.errors import ConfigError
from ragwright.models import METADATA_HEADER, TABLE_HEADER, Chunk, Document, Section, chunk_id_for
from ragwright.ports import TokenCounter

Span = tuple[int, int]
#: Turns one section of the content into spans; the boundaries cover that section.
SectionSplitter = Callable[[str, Section, "Boundaries"], list[Span]]


class Level(IntEnum):
    """Boundary strength, strongest first."""

    PARAGRAPH = 0
    LINE = 1
    SENTENCE = 2
    CLAUSE = 3
    WORD = 4


# Each pattern's boundary is where the separating whitespace begins (or, for CJK punctuation,
# right after the mark), so the text before a cut never ends in the separator.
_CLOSERS = "\"'”’»)\\]」』）"
_PATTERNS: dict[Level, tuple[re.Pattern[str], bool]] = {
    Level.PARAGRAPH: (re.compile(r"[ \t]*\n[ \t]*\n\s*"), False),
    Level.LINE: (re.compile(r"[ \t]*\n\s*"), False),
    Level.SENTENCE: (re.compile(rf"[.!?…]+[{_CLOSERS}]*(?=\s)|[。！？]+[{_CLOSERS}]*"), True),
    Level.CLAUSE: (re.compile(rf"[,;:]+[{_CLOSERS}]*(?=\s)|[，；：、]+"), True),
    Level.WORD: (re.compile(r"\s+"), False),
}
_WORD_START = re.compile(r"(?<=\s)\S")
_NON_SPACE = re.compile(r"\S")


class Boundaries:
    """Boundary positions within ``text[start:end]``, found lazily per level, searched by bisect.

    Positions are kept in arrays of 32-bit integers (64-bit past 2**31 characters): a list of
    Python ints would take 36 bytes each, and a huge single-line file has a word boundary every
    few characters.

    Positions inside a table's units (see `ragwright.chunkers._tables`) are left out, so a
    table is cut only between rows; ``protected=False`` asks for them all, for the rare row too
    long for any chunk.
    """

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end
        self._positions: dict[tuple[Level, bool], array[int]] = {}
        self._tables: list[Table] | None = None
        self._units: Units | None = None
        self._headers: dict[int, str | None] = {}

    @property
    def tables(self) -> list[Table]:
        if self._tables is None:
            self._tables = find_tables(self.text, self.start, self.end)
        return self._tables

    @property
    def units(self) -> Units:
        if self._units is None:
            self._units = Units(self.tables)
        return self._units

    def header(self, position: int) -> str | None:
        """The header a chunk starting at ``position`` carries (`carried_header`): one string
        per table, shared by all the chunks that carry it."""
        table = header_for(self.tables, self.text, position)
        if table is None:
            return None
        if table.start not in self._headers:
            self._headers[table.start] = carried_header(self.text, table)
        return self._headers[table.start]

    def positions(self, level: Level, protected: bool = True) -> array[int]:
        found = self._positions.get((level, protected))
        if found is None:
            if protected and self.units:
                unprotected = self.positions(level, False)
                found = self._offsets(p for p in unprotected if not self.units.inside(p))
            else:
                pattern, at_end = _PATTERNS[level]
                matches = pattern.finditer(self.text, self.start, self.end)
                found = self._offsets(m.end() if at_end else m.start() for m in matches)
            self._positions[(level, protected)] = found
        return found

    def _offsets(self, positions: Iterable[int]) -> array[int]:
        return array("i" if self.end < 2**31 else "q", positions)

    def last(self, level: Level, low: int, high: int, protected: bool = True) -> int | None:
        """The last boundary ``p`` with ``low <= p <= high``."""
        positions = self.positions(level, protected)
        index = bisect_right(positions, high) - 1
        return positions[index] if index >= 0 and positions[index] >= low else None

    def first(self, level: Level, low: int, high: int) -> int | None:
        """The first boundary ``p`` with ``low <= p < high``."""
        positions = self.positions(level)
        index = bisect_left(positions, low)
        return positions[index] if index < len(positions) and positions[index] < high else None

    def word_start(self, low: int, high: int) -> int | None:
        """The first position ``low <= p < high`` where a word begins after whitespace.

        Searched in the window, not looked up in positions found once: the window is an
        overlap (short), and a word starts every few characters, so the positions of a huge
        section would take 4 bytes per word. The lookbehind sees the text before ``low``, so
        the answer is the one a search of the whole section would give."""
        for match in _WORD_START.finditer(self.text, max(low, self.start), min(high, self.end)):
            if not self.units.inside(match.start()):
                return match.start()
        return None

    def hard_cut(self, position: int, low: int) -> int:
        """``position``, moved back off combining marks so a character is never split."""
        text = self.text
        while position - 1 > low and position < len(text) and unicodedata.combining(text[position]):
            position -= 1
        return position


def skip_space(text: str, position: int, end: int) -> int:
    """The first non-whitespace position in ``[position, end)``, else ``end``."""
    match = _NON_SPACE.search(text, position, end)
    return match.start() if match else end


def trim(text: str, start: int, end: int) -> Span | None:
    """The span without leading/trailing whitespace; ``None`` when nothing is left."""
    start = skip_space(text, start, end)
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


@dataclass(frozen=True, slots=True)
class SpanSplitter:
    """Cuts spans into pieces of at most ``size`` chars and, with a ``counter``, at most its
    ``max_tokens`` tokens ("no chunk exceeds the embedder's token window").

    ``windows=False`` cuts at the strongest boundary (recursive rules); ``windows=True`` cuts at
    the window's end, moved back to whitespace when it falls inside a word (fixed windows).
    Each piece after the first repeats up to ``overlap`` chars from the end of the previous one.
    """

    size: int
    overlap: int = 0
    counter: TokenCounter | None = None
    windows: bool = False

    def split(self, bounds: Boundaries, start: int, end: int, keep_first: int = 0) -> list[Span]:
        """Pieces of ``text[start:end]``, trimmed. The first cut falls after ``keep_first``
        chars when it can (a heading stays with the text under it)."""
        text = bounds.text
        trimmed = trim(text, start, end)
        if trimmed is None:
            return []
        low, end = trimmed
        fresh = low  # where text not yet in any piece begins; every piece must take some
        floor = start + keep_first if low < start + keep_first < low + self.size else low
        spans: list[Span] = []
        while True:
            if end - low <= self.size and self._fits(text, low, end):
                spans.append((low, end))
                return spans
            found = self._cut(bounds, low, min(low + self.size, end), floor)
            if found is None:  # nothing fits the token window: give up what can be given up
                if floor > fresh:
                    floor = fresh  # the heading cannot stay whole
                elif low < fresh:
                    low = fresh  # the overlap does not fit
                else:
                    found = (fresh + 1, True)  # one character over the window: cannot be helped
                if found is None:
                    continue
            cut, hard = found
            spans.append((low, cut))
            fresh = skip_space(text, cut, end)
            if fresh >= end:
                return spans
            # Starts are kept on non-whitespace, so trimmed starts strictly increase.
            low = skip_space(text, self._overlap_start(bounds, low, cut, fresh, hard), fresh)
            if low + self.size <= fresh:
                low = fresh  # a long whitespace run left no room for new text after the overlap
            floor = fresh

    def _fits(self, text: str, start: int, end: int) -> bool:
        return self.counter is None or self.counter.count_tokens(text[start:end]) <= _window(
            self.counter
        )

    def _cut(self, bounds: Boundaries, low: int, high: int, floor: int) -> tuple[int, bool] | None:
        """A cut in ``(floor, high]`` whose piece fits the token window; ``None`` if none does."""
        cut, hard = self._boundary(bounds, low, high, floor)
        if self.counter is None:
            return cut, hard
        limit = _window(self.counter)
        while (tokens := self.counter.count_tokens(bounds.text[low:cut])) > limit:
            if cut <= floor + 1:
                return None
            # Guess the length that fits from the token density, then cut at a boundary again.
            high = min(max(low + (cut - low) * limit // tokens, floor + 1), cut - 1)
            cut, hard = self._boundary(bounds, low, high, floor)
        return cut, hard

    def _boundary(self, bounds: Boundaries, low: int, high: int, floor: int) -> tuple[int, bool]:
        if self.windows:
            return _window_cut(bounds, high, floor)
        return _best_cut(bounds, low, high, floor)

    def _overlap_start(self, bounds: Boundaries, low: int, cut: int, fresh: int, hard: bool) -> int:
        """Where the next piece starts: up to ``overlap`` chars back from ``cut``.

        Recursive rules start the overlap at a sentence (or line) start when one falls inside
        it; both start it at a word, never inside one, else there is no overlap.
        """
        if self.overlap <= 0:
            return fresh
        earliest = max(cut - self.overlap, low + 1)
        if not self.windows:
            for level in (Level.PARAGRAPH, Level.LINE, Level.SENTENCE):
                boundary = bounds.first(level, earliest, cut)
                if boundary is not None and (start := skip_space(bounds.text, boundary, cut)) < cut:
                    return start
        word = bounds.word_start(earliest, cut)
        if word is not None:
            return word
        if hard and not self.windows:  # a run without spaces (a long token, CJK): by characters
            return bounds.hard_cut(earliest, low)
        return fresh


def _window(counter: TokenCounter) -> int:
    max_tokens = counter.max_tokens
    if max_tokens < 1:
        raise ConfigError(f"the token counter's max_tokens must be at least 1, not {max_tokens}")
    return max_tokens


def _best_cut(bounds: Boundaries, low: int, high: int, floor: int) -> tuple[int, bool]:
    """Where to end the piece starting at ``low``: a cut in ``(floor, high]``; True if hard.

    The strongest boundary wins as long as the piece keeps at least a quarter of its budget;
    otherwise (a short paragraph before a long one) a weaker boundary later on is better than
    a tiny chunk. A cut inside a table row comes only when no boundary outside one is left.
    """
    fill = low + (high - low) // 4
    for minimum, protected in ((max(floor + 1, fill), True), (floor + 1, True), (floor + 1, False)):
        for level in Level:
            cut = bounds.last(level, minimum, high, protected)
            if cut is not None:
                return cut, False
    return bounds.hard_cut(high, floor), True


def _window_cut(bounds: Boundaries, high: int, floor: int) -> tuple[int, bool]:
    """The window's end ``high``, moved back to whitespace if it falls inside a word or a
    table row."""
    text = bounds.text
    inside_row = bounds.units.inside(high)
    if high >= bounds.end or (
        not inside_row and (text[high - 1].isspace() or text[high].isspace())
    ):
        return high, False
    for protected in (True, False):  # between table rows if there is a way, else anywhere
        word_break = bounds.last(Level.WORD, floor + 1, high, protected)
        if word_break is not None:
            return word_break, False
    return bounds.hard_cut(high, floor), True


def heading_end(text: str, section: Section) -> int:
    """Length of a section's heading (one line, two for a setext heading); 0 without one."""
    if not section.heading_path:
        return 0
    start, end = section.char_start, section.char_end
    first = text.find("\n", start, end)
    if first < 0:
        return end - start
    second = text.find("\n", first + 1, end)
    underline = text[first + 1 : second if second >= 0 else end].strip()
    if underline and set(underline) in ({"="}, {"-"}):
        return (second if second >= 0 else end) - start
    return first - start


def tile_sections(document: Document) -> list[Section]:
    """The document's sections as contiguous, non-overlapping spans over its content.

    Missing sections mean one section; overlapping ones (nested) are clipped at the next
    start; gaps become heading-less sections, so no text is ever left out, but for a span the
    parser marks as the file's metadata header (`METADATA_HEADER`: front matter, already the
    document's metadata). A heading with no text of its own before a subheading is joined to
    that subsection (`_joined_to_children`): a chunk of a bare title ranks for nothing it says.
    """
    text = document.content
    length = len(text)
    ordered = sorted(document.sections, key=lambda section: section.char_start)
    tiled: list[Section] = []
    position = 0
    for index, section in enumerate(ordered):
        following = ordered[index + 1].char_start if index + 1 < len(ordered) else length
        start = min(max(section.char_start, position), length)
        end = min(section.char_end, following, length)
        if end <= start:
            continue
        if start > position:
            tiled.append(Section(position, start))
        if not section.metadata.get(METADATA_HEADER):
            tiled.append(replace(section, char_start=start, char_end=end))
        position = end
    if position < length:
        tiled.append(Section(position, length))
    return _joined_to_children(text, tiled)


def _joined_to_children(text: str, sections: list[Section]) -> list[Section]:
    """``sections`` with each one that holds only its heading joined to the next when that
    one is its subsection: the joined span has the subsection's path (which names the
    heading) and starts at the heading. Read from the end, so a chain of bare headings
    ("# Guide", "## Setup", "### Linux", text) becomes one span."""
    joined: list[Section] = []
    for section in reversed(sections):
        after = joined[-1] if joined else None
        path = section.heading_path
        if (
            after is not None
            and path
            and after.char_start == section.char_end
            and after.heading_path[: len(path)] == path
            and len(after.heading_path) > len(path)
            and not text[section.char_start + heading_end(text, section) : section.char_end].strip()
        ):
            joined[-1] = replace(after, char_start=section.char_start)
        else:
            joined.append(section)
    return joined[::-1]


def section_metadata(section: Section) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        **section.metadata,
        "breadcrumb": section.breadcrumb,
        "heading_path": list(section.heading_path),
    }
    if section.page is not None:
        metadata["page"] = section.page
    return metadata


def iter_assembled(document: Document, split: SectionSplitter) -> Iterator[Chunk]:
    """Chunks of a document, section by section, from a chunker's section splitter, one at a
    time: a huge document's chunks need not all be in memory at once (ingest embeds and
    writes them in batches as they come)."""
    text = document.content
    index = 0
    for section in tile_sections(document):
        bounds = Boundaries(text, section.char_start, section.char_end)
        for span in split(text, section, bounds):
            trimmed = trim(text, *span)
            if trimmed is None:
                continue
            start, end = trimmed
            piece = text[start:end]
            metadata = section_metadata(section)
            header = bounds.header(start)
            if header is not None:
                metadata[TABLE_HEADER] = header
            yield Chunk(
                id=chunk_id_for(document.id, start, piece),
                document_id=document.id,
                index=index,
                text=piece,
                char_start=start,
                char_end=end,
                metadata=metadata,
            )
            index += 1


def describe(chunker: object, *options: str) -> str:
    """``Name(option=value, ...)``: a chunker's repr, as configuration would spell it."""
    arguments = ", ".join(f"{name}={getattr(chunker, name)!r}" for name in options)
    return f"{type(chunker).__name__}({arguments})"


def check_size(name: str, value: object, minimum: int = 1) -> int:
    """A validated integer option (``bool`` is refused: ``size=True`` is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return value


def check_overlap(overlap: object, size: int, size_name: str = "size") -> int:
    overlap = check_size("overlap", overlap, minimum=0)
    if overlap >= size:
        raise ConfigError(f"overlap ({overlap}) must be smaller than {size_name} ({size})")
    return overlap
