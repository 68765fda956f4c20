"""Citations in a generated answer: ``[n]`` markers checked, resolved and judged.

While the answer streams, `MarkerFilter` drops every marker that names no source (``[7]`` with
five sources), so the text shown is the final text. Afterwards `resolve` maps each source number
the answer cites to a `Citation` with an exact character span, and flags the sentences that
cite nothing.

The span: a model cites a whole source, not a sentence of it. For each sentence citing source
``n``, the sentence of that chunk sharing the most content words with it (at least half of the
sentence's) is taken as its support; the citation's span runs from the first to the last such
supporting sentence. When no sentence of the chunk clears that bar, the span is the whole chunk
(the model's claim may paraphrase it) and a warning names the sentence. Either way the span is
an exact slice of the stored document: ``document.content[char_start:char_end] == quote``.

Document text an answer quotes itself (the extractive engine's) goes through `neutralised`
first: a ``[1]`` in the document would read as one of the answer's citations (and surfaces
would link it as one), and invisible characters hide text from the reader. Only the text shown
changes; the citation's span and quote stay the exact document text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragwright.llms.prompt import INVISIBLE_CLASSES, NOT_FOUND, Source
from ragwright.models import Citation
from ragwright.sentences import sentence_spans
from ragwright.stores.fts_query import STOP_WORDS

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_INVISIBLE = re.compile("[" + "".join(INVISIBLE_CLASSES.values()) + "]")
_WORD = re.compile(r"\w+")
_MAX_MARKER = 40  # a longer bracket is prose, not a marker
#: Share of a sentence's content words a chunk sentence must contain to be its support.
MIN_OVERLAP = 0.5


class MarkerFilter:
    """Streams text through, dropping citation markers that name none of the ``known`` source
    numbers.

    Markers may arrive split across pieces (``"[1"`` then ``"2]"``), so a possible marker, and
    the whitespace before it, is held back until it is complete. A marker naming only unknown
    sources is removed with the whitespace before it; one naming some known sources keeps just
    those. ``removed`` lists the unknown numbers in the order they appeared."""

    def __init__(self, known: Iterable[int]) -> None:
        self.known = frozenset(known)
        self.removed: list[int] = []
        self._space = ""
        self._bracket: str | None = None

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for char in piece:
            self._step(char, out)
        return "".join(out)

    def flush(self) -> str:
        rest = self._space + (self._bracket or "")
        self._space, self._bracket = "", None
        return rest

    def _step(self, char: str, out: list[str]) -> None:
        if self._bracket is not None:
            if char == "]":
                out.append(self._resolve(self._bracket + char))
                self._bracket = None
                return
            if (char.isdigit() or char in ", ") and len(self._bracket) < _MAX_MARKER:
                self._bracket += char
                return
            out.append(self._space + self._bracket)  # not a marker after all
            self._space, self._bracket = "", None
        if char == "[":
            self._bracket = "["
        elif char.isspace():
            self._space += char
        else:
            out.append(self._space + char)
            self._space = ""

    def _resolve(self, marker: str) -> str:
        space, self._space = self._space, ""
        match = _MARKER.fullmatch(marker)
        if match is None:
            return space + marker
        numbers = [int(n) for n in match.group(1).split(",")]
        known = [n for n in numbers if n in self.known]
        self.removed.extend(n for n in numbers if n not in known and n not in self.removed)
        if len(known) == len(numbers):
            return space + marker
        if not known:
            return "\n" if "\n" in space else ""
        return space + "[" + ", ".join(str(n) for n in known) + "]"


def strip_unknown(text: str, known: Iterable[int]) -> tuple[str, list[int]]:
    """``text`` with markers naming no ``known`` source removed, and the numbers removed."""
    markers = MarkerFilter(known)
    return markers.feed(text) + markers.flush(), markers.removed


def neutralised(quoted: str) -> str:
    """Document text as an answer shows it: without invisible characters (controls,
    zero-width and bidirectional marks, Unicode tag characters, …; see `INVISIBLE_CLASSES`),
    and with each citation marker it holds written in parentheses (``[1]`` becomes ``(1)``), so
    nothing in it reads, or is parsed, as a citation of the answer's. Invisible characters go
    first: one inside a marker (``[\u200b1]``) cannot save it."""
    return _MARKER.sub(r"(\1)", _INVISIBLE.sub("", quoted))


def listed_markers(numbers: Iterable[int]) -> str:
    """``[2], [7]``: source numbers as the markers a warning names."""
    return ", ".join(f"[{n}]" for n in numbers)


@dataclass
class Resolution:
    citations: tuple[Citation, ...]
    unsupported: tuple[str, ...]
    warnings: list[str] = field(default_factory=list)


def resolve(text: str, sources: Sequence[Source]) -> Resolution:
    """The citations of ``text`` (whose markers all name ``sources``), in order of first
    citation, and the sentences citing nothing."""
    by_number = {source.number: source for source in sources}
    supports: dict[int, list[tuple[int, int]]] = {}
    unsupported: list[str] = []
    warnings: list[str] = []
    for sentence in _answer_sentences(text):
        numbers = [int(n) for group in _MARKER.findall(sentence) for n in group.split(",")]
        claim = _MARKER.sub("", sentence).strip()
        if not numbers:
            if _is_claim(claim):
                unsupported.append(claim)
            continue
        for number in numbers:
            source = by_number.get(number)
            if source is None:
                continue
            span = _support(claim, source)
            supports.setdefault(number, [])
            if span is None:
                warnings.append(
                    f"[{number}] is cited for a sentence its text does not contain: "
                    f"{_short(claim)!r}; the citation spans the whole source"
                )
            else:
                supports[number].append(span)
    citations = tuple(_citation(by_number[n], spans) for n, spans in supports.items())
    return Resolution(citations, tuple(unsupported), warnings)


def _answer_sentences(text: str) -> list[str]:
    """The answer's sentences; a sentence that is only markers belongs to the one before."""
    sentences: list[str] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if sentences and not _MARKER.sub("", sentence).strip(" .;,"):
            sentences[-1] += " " + sentence
        else:
            sentences.append(sentence)
    return sentences


def _is_claim(sentence: str) -> bool:
    """Whether a sentence states something that needs a source (not a Markdown heading, not
    the not-found reply, not a one-word line)."""
    if sentence.startswith(("#", NOT_FOUND[:-1])):
        return False
    return len(_content_words(sentence)) >= 2


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS}


def _support(claim: str, source: Source) -> tuple[int, int] | None:
    """The document span of the chunk sentence that best supports ``claim``, if any does."""
    wanted = _content_words(claim)
    if not wanted:
        return None
    chunk = source.hit.chunk
    best: tuple[float, int, int] | None = None
    for start, end in sentence_spans(chunk.text, chunk.char_start):
        words = _content_words(chunk.text[start - chunk.char_start : end - chunk.char_start])
        overlap = len(wanted & words) / len(wanted)
        if overlap >= MIN_OVERLAP and (best is None or overlap > best[0]):
            best = (overlap, start, end)
    return None if best is None else (best[1], best[2])


def _citation(source: Source, spans: list[tuple[int, int]]) -> Citation:
    chunk = source.hit.chunk
    start = min((s for s, _ in spans), default=chunk.char_start)
    end = max((e for _, e in spans), default=chunk.char_end)
    return Citation(
        number=source.number,
        chunk_id=chunk.id,
        document_id=chunk.document_id,
        source=source.hit.source,
        char_start=start,
        char_end=end,
        quote=chunk.text[start - chunk.char_start : end - chunk.char_start],
        index=source.hit.index,
    )


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
