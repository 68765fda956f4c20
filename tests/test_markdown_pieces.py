"""Markdown is block-parsed a piece at a time (issue 31: the parse worker held markdown-it's
tokens of the whole file): the sections are those of one parse of the whole text, wherever the
pieces end, and a large file's parse stays within a few times its size."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragwright.parsers import markdown
from ragwright.parsers.markdown import MarkdownParser

BLOCKS = [
    "# Title\n",
    "Setext heading\n===\n",
    "Another\n---\n",
    "## Section *two* with `code` and [a link][ref]\n",
    "[ref]: /somewhere 'title'\n",
    "A paragraph line\nthat goes on\n",
    "```\n# not a heading\n",
    "```\n",
    "    # indented code\n",
    "> # quoted heading\n> more\n",
    "- item one\n- # heading in a list\n\n  continued\n",
    "<div>\n# inside html\n</div>\n",
    "| a | b |\n| --- | --- |\n| 1 | 2 |\n",
    "### \\# escaped hash\n",
    "#\n",
    "\n",
    "\n\n",
    "---\n",
    "1. first\n2. second\n",
]


def sections(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    parsed = MarkdownParser().parse(text.encode(), "doc.md")
    return [(s.heading_path, s.char_start, s.char_end) for s in parsed.sections]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(BLOCKS), max_size=30), st.integers(1, 80))
def test_the_sections_do_not_depend_on_where_pieces_end(blocks: list[str], piece: int) -> None:
    text = "".join(blocks)
    whole = sections(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "PIECE", piece)
        assert sections(text) == whole


def test_front_matter_shifts_heading_positions_as_before() -> None:
    text = "---\ntitle: T\nyear: 2020\n---\n\n# One\n\ntext\n\n## Two\n"
    parsed = MarkdownParser().parse(text.encode(), "doc.md")
    starts = {s.heading_path[-1]: s.char_start for s in parsed.sections if s.heading_path}
    assert text[starts["One"] :].startswith("# One")
    assert text[starts["Two"] :].startswith("## Two")
    assert parsed.metadata["year"] == 2020


def large_markdown(sections: int) -> str:
    parts = []
    for n in range(sections):
        items = "".join(f"- item {n} {i} of a list\n" for i in range(3))
        parts.append(f"## Section {n}\n\nA paragraph of words, words and words.\n\n{items}\n")
    return "".join(parts)


def test_parsing_a_large_markdown_file_takes_a_few_times_the_file() -> None:
    text = large_markdown(20_000)  # 2.5 MB: 180,000 block tokens in one parse (200 MB)
    data = text.encode()
    parser = MarkdownParser()
    parser.parse(b"# warm up\n", "warm.md")
    tracemalloc.start()
    try:
        parsed = parser.parse(data, "large.md")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(parsed.sections) == 20_000
    assert peak < 4 * len(data) + 4 * 1024 * 1024 + 200 * len(parsed.sections), peak / len(data)
