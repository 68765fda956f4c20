"""Sentence spans: where sentences start and end in a text, as character offsets.

A rule-based splitter (no model, no downloads), for text in any script:

- ``.``, ``!`` or ``?`` end a sentence when whitespace and then an upper-case letter (of any
  alphabet: "Ä", "Б"), a digit, an opening quote or bracket, or a letter of a script without
  case (Chinese, Arabic, Hebrew, Thai…) follow. Common abbreviations ("e.g.", "Dr.", "Fig.")
  and decimals do not end a sentence.
- The full-width ``。！？．`` (Chinese, Japanese) end one where they stand, spaces or not, as
  do the danda ``।`` (Hindi and other Indic scripts), ``؟`` and ``۔`` (Arabic, Urdu), ``։``
  (Armenian), ``።`` (Amharic) and ``။`` (Burmese); closing quotes and brackets after them
  (``」``, ``』``, ``）``) stay with the sentence, which goes on when text follows the
  quotation at once (``「はい。」と言った。`` is one sentence).
- A line break ends a sentence.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs al fig figs dr mr mrs ms prof st no vol approx ca cf eq eqs sec ref"
    " refs".split()
)
#: Marks that end a sentence where they stand, whatever follows.
_FULL_STOPS = "。！？．｡‼⁇⁈⁉।॥؟۔։።။"
#: Closing quotes and brackets that belong to the sentence before them.
_CLOSERS = "\"')]»”’」』）】〉》"
#: What may open a sentence before its first letter.
_OPENERS = "\"'([«“‘„¿¡「『（【〈《"
_BOUNDARY = re.compile(
    rf"[.!?][{re.escape(_CLOSERS)}]*\s+(?=\S)"
    rf"|[{_FULL_STOPS}][{re.escape(_CLOSERS)}]*\s*"
    r"|\n\s*"
)


def sentence_spans(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, trimmed of surrounding whitespace, shifted by
    ``offset``. Every span is a non-empty slice of ``text``."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        boundary = match.group()
        if (
            boundary[0] in ".!?"
            and "\n" not in boundary
            and not _starts_sentence(text, match.end())
        ):
            continue
        if _quoted_then_continued(text, match):
            continue
        if match.group().startswith(".") and _ends_with_abbreviation(text, match.start()):
            continue
        _add_trimmed(text, start, match.start() + _punctuation_length(match.group()), spans)
        start = match.end()
    _add_trimmed(text, start, len(text), spans)
    return [(s + offset, e + offset) for s, e in spans]


def _quoted_then_continued(text: str, match: re.Match[str]) -> bool:
    """「…。」と言った: a full stop inside a quotation the sentence goes on after."""
    boundary = match.group()
    return (
        boundary[0] in _FULL_STOPS
        and boundary[-1] in _CLOSERS
        and match.end() < len(text)
        and text[match.end()] not in _OPENERS
    )


def _starts_sentence(text: str, at: int) -> bool:
    """Whether what follows western end punctuation opens a sentence: not a lower-case word
    ("e.g. this", "3.5 m. long")."""
    rest = text[at : at + 2].lstrip(_OPENERS)
    if not rest:
        return at < len(text)  # only an opening quote or bracket follows
    first = rest[0]
    return first.isupper() or first.isdigit() or (first.isalpha() and not first.islower())


def _punctuation_length(boundary: str) -> int:
    return len(boundary) - len(boundary.lstrip(".!?" + _FULL_STOPS + _CLOSERS))


def _ends_with_abbreviation(text: str, dot: int) -> bool:
    word = re.search(r"([\w.]+)$", text[max(0, dot - 12) : dot])
    if word is None:
        return False
    token = word.group(1).lower().rstrip(".")
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def _add_trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    segment = text[start:end]
    stripped = segment.strip()
    if stripped:
        left = start + (len(segment) - len(segment.lstrip()))
        spans.append((left, left + len(stripped)))
