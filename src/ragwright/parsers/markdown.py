"""Markdown: the normalized source is the content, so citations point into what the user wrote.

Headings come from markdown-it's token line maps, so ``#`` lines inside fenced code, HTML blocks
or indented code are never mistaken for headings, and setext headings are found too. Only
top-level headings count: a heading inside a block quote or list item is quoted material, not
the document's structure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
    from markdown_it.token import Token

# YAML front matter (``---`` … ``---``/``...``) or TOML (``+++`` … ``+++``) at the very top.
_FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\n(?P<yaml>.*?)^(?:---|\.\.\.)|\+\+\+[ \t]*\n(?P<toml>.*?)^\+\+\+)[ \t]*$\n?",
    re.DOTALL | re.MULTILINE,
)
_YAML_PAIR = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?")
_TOML_PAIR = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)[ \t]*=[ \t]*(?P<value>.*)")
_LINE_BREAK = re.compile(r"\n")
_INTEGER = re.compile(r"[-+]?\d{1,18}")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?")


class MarkdownParser:
    """Reads Markdown: sections per ATX/setext heading with breadcrumbs, front matter metadata.

    Metadata: the front matter's top-level ``key: value`` pairs as strings, and ``title`` (the
    front matter's title, else the first H1). Front matter stays in ``content`` (exactness).
    """

    extensions: tuple[str, ...] = (".md", ".markdown", ".mdown", ".mkd")
    content_types: tuple[str, ...] = ("text/markdown", "text/x-markdown")

    def __init__(self) -> None:
        self._md: MarkdownIt | None = None  # built when a Markdown file is first read

    def __getstate__(self) -> dict[str, Any]:
        # A MarkdownIt instance holds modules and cannot be pickled; the parse worker (which
        # gets parsers pickled, to parse under the time and memory limits) builds its own.
        return {**self.__dict__, "_md": None}

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        content, warnings = read_text(data, source)
        metadata, body = _split_front_matter(content)
        if self._md is None:
            from markdown_it import MarkdownIt

            self._md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
        headings = _headings(self._md.parse(body), _line_starts(content))
        return headed_document(content, headings, metadata, "text/markdown", warnings)


def _split_front_matter(content: str) -> tuple[dict[str, Scalar], str]:
    """Front matter pairs, and the content with the front matter blanked (same line count)."""
    match = _FRONT_MATTER.match(content)
    if match is None:
        return {}, content
    yaml, toml = match.group("yaml"), match.group("toml")
    pairs = _front_matter_pairs(yaml, _YAML_PAIR) if yaml is not None else None
    if toml is not None:
        pairs = _front_matter_pairs(toml, _TOML_PAIR)
    if pairs is None:
        return {}, content  # e.g. a document that opens with a thematic break
    blank = "\n" * match.group(0).count("\n")
    return pairs, blank + content[match.end() :]


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


def _line_starts(content: str) -> list[int]:
    return [0, *(match.end() for match in _LINE_BREAK.finditer(content))]


def _headings(tokens: Sequence[Token], line_starts: Sequence[int]) -> list[Heading]:
    headings: list[Heading] = []
    for position, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        inline = tokens[position + 1]
        text = collapse_whitespace(_plain_text(inline.children or []))
        if text:  # an empty heading ("#") names nothing; it stays in the section above
            headings.append(Heading(line_starts[token.map[0]], int(token.tag[1:]), text))
    return headings


def _plain_text(children: Sequence[Any]) -> str:
    """Inline tokens → plain text: markup dropped, link text and image alt text kept."""
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)
