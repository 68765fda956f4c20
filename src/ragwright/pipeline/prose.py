"""The prose of a chunk, as whole sentences to quote: the sentences of its paragraphs and list
items, never a line of a code block, a heading, a table row, a list introduction (a sentence
ending in ``:``), a question, or a fragment of a hard-wrapped line.

Text is read as Markdown-ish lines: a paragraph runs over line breaks until a blank line, a
heading, a list item, a table row or a code fence, so a sentence wrapped over two lines is one
sentence. Each span is an exact slice of the text (offsets into it, shifted by ``offset``).
"""

from __future__ import annotations

import re

from ragwright.pipeline.sentences import sentence_spans

_FENCE = re.compile(r"[ ]{0,3}(```|~~~)\s*(\S*)")
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(\s|$)")
_TABLE_ROW = re.compile(r"\s*\|")
_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)]|>)\s+")
_INDENTED_CODE = re.compile(r"(?: {4}|\t)")
#: A whole sentence ends with a full stop or an exclamation mark (a question is no answer).
_ENDS = re.compile(r"[.!][\"'”)\]*_`]*$")
#: How a sentence starts when it may be the tail of one cut off before the text: a capital, a
#: digit, code or a quote, possibly after emphasis.
_STARTS = re.compile(r"[*_]*[A-Z0-9`\"'“(\[]")


def prose_sentences(text: str, offset: int = 0, *, cut: bool = True) -> list[tuple[int, int]]:
    """``(start, end)`` of each whole prose sentence of ``text``, in order. ``cut``: the text
    may begin in the middle of a sentence (a chunk after the first), so a first line that does
    not start like a sentence is taken for the end of one and left out."""
    spans: list[tuple[int, int]] = []
    for start, end in _blocks(text):
        # Line breaks inside a paragraph are spaces to the sentence splitter (same length, so
        # the offsets hold), so a hard-wrapped sentence is found whole.
        flat = re.sub(r"[\r\n]", " ", text[start:end])
        for s, e in sentence_spans(flat, start):
            if s == 0 and cut and not _STARTS.match(text, s):
                continue
            if _ENDS.search(text[s:e]):
                spans.append((s + offset, e + offset))
    return spans


def _blocks(text: str) -> list[tuple[int, int]]:
    """The spans of the paragraphs and list items outside code blocks, headings and tables."""
    blocks: list[tuple[int, int]] = []
    current: list[int] = []  # [start, end] of the open block

    def close() -> None:
        if current:
            blocks.append((current[0], current[1]))
            current.clear()

    in_code = _starts_inside_code(text)
    position = 0
    for line in text.splitlines(keepends=True):
        start, position = position, position + len(line)
        body = line.rstrip("\r\n")
        end = start + len(body)
        if _FENCE.match(body):
            close()
            in_code = not in_code
        elif in_code or not body.strip() or _HEADING.match(body) or _TABLE_ROW.match(body):
            close()
        elif item := _ITEM.match(body):
            close()
            current[:] = [start + item.end(), end]
        elif current:
            current[1] = end
        elif not _INDENTED_CODE.match(body):
            current[:] = [start + len(body) - len(body.lstrip()), end]
    close()
    return [(s, e) for s, e in blocks if e > s]


def _starts_inside_code(text: str) -> bool:
    """Whether a chunk begins inside a fenced block that opened in an earlier chunk: its fences
    do not pair up and the first one has no language, so it closes a block."""
    fences = [m for line in text.splitlines() if (m := _FENCE.match(line))]
    return len(fences) % 2 == 1 and not fences[0].group(2)
