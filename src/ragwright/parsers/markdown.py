"""Markdown: the normalized source is the content, so citations point into what the user wrote.

Headings come from markdown-it's token line maps, so ``#`` lines inside fenced code, HTML blocks
or indented code are never mistaken for headings, and setext headings are found too. Only
top-level headings count: a heading inside a block quote or list item is quoted material, not
the document's structure.

The blocks are parsed a piece of the text at a time (`_top_level_headings`), so the tokens of
one piece are in memory, never the whole file's: markdown-it's tokens of an 8 MB file of
sections and lists took 280 MB. A piece ends where a top-level block starts, and the block
parser keeps no state from one top-level block to the next but the link reference definitions
(kept for the whole file): the headings are those of one parse of the whole text. Each
heading's inline text is parsed last, with every definition known, as one parse does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.filters import Scalar
from ragwright.models import ParsedDocument
from ragwright.parsers._text import (
    Heading,
    collapse_whitespace,
    headed_document,
    read_text,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# YAML front matter (``---`` … ``---``/``...``) or TOML (``+++`` … ``+++``) at the very top.
_FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\n(?P<yaml>.*?)^(?:---|\.\.\.)|\+\+\+[ \t]*\n(?P<toml>.*?)^\+\+\+)[ \t]*$\n?",
    re.DOTALL | re.MULTILINE,
)
_YAML_PAIR = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?")
_TOML_PAIR = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)[ \t]*=[ \t]*(?P<value>.*)")
#: About how many characters of Markdown are block-parsed at a time.
PIECE = 64 * 1024
_INTEGER = re.compile(r"[-+]?\d{1,18}")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?")


class MarkdownParser:
    """Reads Markdown: sections per ATX/setext heading with breadcrumbs, front matter metadata.

    Metadata: the front matter's top-level ``key: value`` pairs as strings, and ``title`` (the
    front matter's title, else the first H1). Front matter stays in ``content`` (exactness),
    as a section of its own marked `METADATA_HEADER`: metadata, not text to search, so no
    chunk holds it (alone, it ranked first for any question using the title's words).
    """

    extensions: tuple[str, ...] = (".md", ".markdown", ".mdown", ".mkd")
    content_types: tuple[str, ...] = ("text/markdown", "text/x-markdown")

    def __init__(self) -> None:
        # Built when a Markdown file is first read: block structure only, and inline text.
        self._md: tuple[MarkdownIt, MarkdownIt] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A MarkdownIt instance holds modules and cannot be pickled; the parse worker (which
        # gets parsers pickled, to parse under the time and memory limits) builds its own.
        return {**self.__dict__, "_md": None}

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        content, warnings = read_text(data, source)
        metadata, body, shift, header_end = _split_front_matter(content)
        if self._md is None:
            from markdown_it import MarkdownIt

            inline = MarkdownIt("commonmark").enable(["table", "strikethrough"])
            blocks = MarkdownIt("commonmark").enable(["table", "strikethrough"])
            blocks.core.ruler.disable(["inline", "text_join"])
            self._md = blocks, inline
        blocks, inline = self._md
        env: dict[str, Any] = {}
        found = list(_top_level_headings(blocks, body, env))
        del body
        headings = []
        for position, level, text in found:
            [line] = inline.parseInline(text, env)
            plain = collapse_whitespace(_plain_text(line.children or []))
            if plain:  # an empty heading ("#") names nothing; it stays in the section above
                headings.append(Heading(position + shift, level, plain))
        return headed_document(content, headings, metadata, "text/markdown", warnings, header_end)


def _split_front_matter(content: str) -> tuple[dict[str, Scalar], str, int, int]:
    """Front matter pairs, the content with the front matter blanked (same line count), what
    to add to a position after the blank to find it in ``content``, and where the front
    matter ends in ``content`` (0: none)."""
    match = _FRONT_MATTER.match(content)
    if match is None:
        return {}, content, 0, 0
    yaml, toml = match.group("yaml"), match.group("toml")
    pairs = _front_matter_pairs(yaml, _YAML_PAIR) if yaml is not None else None
    if toml is not None:
        pairs = _front_matter_pairs(toml, _TOML_PAIR)
    if pairs is None:
        return {}, content, 0, 0  # e.g. a document that opens with a thematic break
    blank = "\n" * match.group(0).count("\n")
    return pairs, blank + content[match.end() :], match.end() - len(blank), match.end()


def _front_matter_pairs(block: str, pair: re.Pattern[str]) -> dict[str, Scalar] | None:
    """Top-level scalar pairs; ``None`` when the block does not look like front matter at all.
    Unquoted numbers and booleans become numbers and booleans, so filters such as
    ``year >= 2020`` or ``draft = false`` work on them."""
    pairs: dict[str, Scalar] = {}
    for line in block.splitlines():
        if not line.strip() or line[0] in " \t#-" or line.startswith("["):
            continue  # blank, nested, comment, list item or TOML table: not a top-level scalar
        match = pair.fullmatch(line.rstrip())
        if match is None:
            return None
        raw = (match.group("value") or "").strip()
        value = _unquote(raw)
        if value:
            quoted = raw[:1] in "\"'" and raw[:1] == raw[-1:]
            pairs[match.group("key")] = value if quoted else _typed(value)
    return pairs


def _typed(value: str) -> Scalar:
    """A plain front-matter value as YAML would read it: integer, float, boolean or text."""
    if _INTEGER.fullmatch(value):
        return int(value)
    if _FLOAT.fullmatch(value):
        return float(value)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    comment = value.find(" #")  # YAML/TOML trailing comment on an unquoted value
    return value[:comment].rstrip() if comment >= 0 else value


def _top_level_headings(
    md: MarkdownIt, body: str, env: dict[str, Any]
) -> Iterator[tuple[int, int, str]]:
    """(position in ``body``, level, inline source) of each top-level heading, block-parsed
    about `PIECE` characters at a time. The last top-level block of a piece may go on past
    it: it is parsed again at the start of the next piece (a piece with one block grows)."""
    start, size = 0, PIECE
    while start < len(body):
        end = body.find("\n", start + size) + 1 or len(body)
        piece = body[start:end]
        tokens = md.parse(piece, env)
        final = end == len(body)
        resume = len(tokens)
        if not final:
            tops = [i for i, t in enumerate(tokens) if t.level == 0 and t.nesting >= 0 and t.map]
            if len(tops) < 2:
                size *= 2
                continue
            resume = tops[-1]
        lines = _line_offsets(piece)
        for position, token in enumerate(tokens[:resume]):
            if token.type == "heading_open" and token.level == 0 and token.map is not None:
                text = tokens[position + 1].content
                yield start + lines[token.map[0]], int(token.tag[1:]), text
        if final:
            return
        map_ = tokens[resume].map
        assert map_ is not None
        start += lines[map_[0]]
        size = PIECE


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    found = text.find("\n")
    while found >= 0:
        offsets.append(found + 1)
        found = text.find("\n", found + 1)
    return offsets


def _plain_text(children: Sequence[Any]) -> str:
    """Inline tokens → plain text: markup dropped, link text and image alt text kept."""
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)
