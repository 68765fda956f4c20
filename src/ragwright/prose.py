"""The prose of a chunk, as whole sentences to quote: the sentences of its paragraphs and list
items, never a line of a code block, a heading, a table row, a list introduction (a sentence
ending in ``:``) on its own, a question, a fragment of a hard-wrapped line, or a sentence
that starts or ends inside inline markup (an unpaired backtick).

A list introduction is quoted only together with its list: one span from the introduction to
the end of the list's last item ("Supported platforms are: - Debian 12 - Ubuntu 24.04"), and
only when the whole list is in the text and short (``max_list_chars``): an introduction
without its items says nothing, and items without their introduction lose what they list.

Text is read as Markdown-ish lines: a paragraph runs over line breaks until a blank line, a
heading, a list item, a table row or a code fence, so a sentence wrapped over two lines is one
sentence. Each span is an exact slice of the text (offsets into it, shifted by ``offset``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragwright.sentences import sentence_spans

_FENCE = re.compile(r"[ ]{0,3}(```|~~~)\s*(\S*)")
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(\s|$)")
_TABLE_ROW = re.compile(r"\s*\|")
_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)]|>)\s+")
_INDENTED_CODE = re.compile(r"(?: {4}|\t)")
#: A whole sentence ends with a full stop or an exclamation mark (a question is no answer).
_ENDS = re.compile(r"[.!][\"'”)\]*_`]*$")


def _inside_markup(sentence: str) -> bool:
    """Whether the sentence starts or ends inside inline markup or a parenthesis: an unpaired
    backtick or ``**``, an unclosed ``[`` or ``(``. The splitter cut at a full stop inside a
    code span ("Run `ragwright check …`."), or a chunk began inside a parenthesis ('"Kiss"
    inside "the film Kiss and Tell").'), so the span is a fragment however whole it looks."""
    code = sentence.count("`")
    bold = sentence.replace("`", "").count("**")
    return (
        code % 2 == 1
        or bold % 2 == 1
        or sentence.count("[") != sentence.count("]")
        or sentence.count("(") != sentence.count(")")
    )


#: How a sentence starts when it may be the tail of one cut off before the text: a capital, a
#: digit, code or a quote, possibly after emphasis.
_STARTS = re.compile(r"[*_]*[A-Z0-9`\"'“(\[]")


#: The longest list (introduction and items) quoted as one span.
MAX_LIST_CHARS = 600


def prose_sentences(
    text: str,
    offset: int = 0,
    *,
    cut: bool = True,
    max_list_chars: int = MAX_LIST_CHARS,
    following: str | None = None,
) -> list[tuple[int, int]]:
    """``(start, end)`` of each whole prose sentence of ``text``, and of each list introduction
    with its list, in order. ``cut``: the text may begin in the middle of a sentence (a chunk
    after the first), so a first line that does not start like a sentence is taken for the end
    of one and left out. ``max_list_chars`` 0 quotes no lists. ``following``: the text after
    ``text`` in its document, when known ("" at its end), which says whether a list running
    to the end of ``text`` goes on."""
    spans: list[tuple[int, int]] = []
    blocks = _blocks(text)
    for number, block in enumerate(blocks):
        # Line breaks inside a paragraph are spaces to the sentence splitter (same length, so
        # the offsets hold), so a hard-wrapped sentence is found whole.
        flat = re.sub(r"[\r\n]", " ", text[block.start : block.end])
        sentences = sentence_spans(flat, block.start)
        whole = [(s, e) for s, e in sentences if not (s == 0 and cut and not _STARTS.match(text))]
        spans += [
            (s + offset, e + offset)
            for s, e in whole
            if _ENDS.search(text[s:e]) and not _inside_markup(text[s:e])
        ]
        if whole and not block.item and text[block.start : block.end].endswith(":"):
            end, s = _list_end(blocks, number, text, following), whole[-1][0]
            if end is not None and end - s <= max_list_chars:
                spans.append((s + offset, end + offset))
    return sorted(spans)


def _list_end(blocks: list[_Block], number: int, text: str, following: str | None) -> int | None:
    """Where the list right after the introduction ``blocks[number]`` ends: after its last item,
    when it has one and is known to end there: before the text does, or where the text that
    follows does not go on with an item (unknown: it may go on in the next chunk)."""
    end = None
    for block in blocks[number + 1 :]:
        if not block.item or block.group != blocks[number].group:
            break
        end = block.end
    if end is None:
        return None
    if text[end:].strip():
        return end
    if following is None:
        return None
    rest = following.lstrip("\r\n")
    return None if _ITEM.match(rest) or (rest[:1].isspace() and rest.strip()) else end


@dataclass(frozen=True, slots=True)
class _Block:
    start: int
    end: int
    item: bool  # a list item (else a paragraph)
    #: Paragraphs, headings, code and tables each start a new group; list items join the group
    #: they follow, so an introduction and its items share one.
    group: int


def _blocks(text: str) -> list[_Block]:
    """The paragraphs and list items outside code blocks, headings and tables."""
    blocks: list[_Block] = []
    current: list[int] = []  # [start, end, item] of the open block
    group = 0

    def close() -> None:
        if current and current[1] > current[0]:
            blocks.append(_Block(current[0], current[1], bool(current[2]), group))
        current.clear()

    in_code = _starts_inside_code(text)
    position = 0
    for line in text.splitlines(keepends=True):
        start, position = position, position + len(line)
        body = line.rstrip("\r\n")
        end = start + len(body)
        if _FENCE.match(body):
            close()
            in_code, group = not in_code, group + 1
        elif in_code or _HEADING.match(body) or _TABLE_ROW.match(body):
            close()
            group += 1
        elif not body.strip():
            close()
        elif item := _ITEM.match(body):
            close()
            current[:] = [start + item.end(), end, 1]
        elif current:
            current[1] = end
        elif not _INDENTED_CODE.match(body):
            group += 1
            current[:] = [start + len(body) - len(body.lstrip()), end, 0]
    close()
    return blocks


def _starts_inside_code(text: str) -> bool:
    """Whether a chunk begins inside a fenced block that opened in an earlier chunk: its fences
    do not pair up and the first one has no language, so it closes a block."""
    fences = [m for line in text.splitlines() if (m := _FENCE.match(line))]
    return len(fences) % 2 == 1 and not fences[0].group(2)
