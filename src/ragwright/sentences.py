"""Sentence spans: where sentences start and end in a text, as character offsets.

A rule-based splitter (no model, no downloads): a sentence ends at ``.``, ``!`` or ``?``
followed by whitespace and an upper-case letter, digit or opening quote/bracket, or at a line
break. Common abbreviations ("e.g.", "Dr.", "Fig.") and decimals do not end a sentence.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs al fig figs dr mr mrs ms prof st no vol approx ca cf eq eqs sec ref"
    " refs".split()
)
_BOUNDARY = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*")


def sentence_spans(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, trimmed of surrounding whitespace, shifted by
    ``offset``. Every span is a non-empty slice of ``text``."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.group().startswith(".") and _ends_with_abbreviation(text, match.start()):
            continue
        _add_trimmed(text, start, match.start() + _punctuation_length(match.group()), spans)
        start = match.end()
    _add_trimmed(text, start, len(text), spans)
    return [(s + offset, e + offset) for s, e in spans]


def _punctuation_length(boundary: str) -> int:
    return len(boundary) - len(boundary.lstrip(".!?\"')]"))


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
