"""Chunkers: the exact-slice invariant and coverage as properties, then each chunker's rules."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.chunkers import (
    FixedWindowChunker,
    MarkdownHeadingChunker,
    ParagraphChunker,
    RecursiveChunker,
    WholeDocumentChunker,
    create_chunker,
)
from ragwright.chunkers._spans import tile_sections
from ragwright.errors import ConfigError
from ragwright.models import Chunk, Document, Section, chunk_id_for, document_id_for
from ragwright.parsers import MarkdownParser
from ragwright.ports import Chunker


@dataclass
class WordCounter:
    """A fake TokenCounter: one token per whitespace-separated word."""

    max_tokens: int

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def doc(content: str, sections: tuple[Section, ...] = (), source: str = "doc.txt") -> Document:
    return Document(id=document_id_for(source), source=source, content=content, sections=sections)


def markdown_doc(text: str) -> Document:
    parsed = MarkdownParser().parse(text.encode(), "doc.md")
    return doc(parsed.content, parsed.sections, "doc.md")


def texts(chunks: list[Chunk]) -> list[str]:
    return [chunk.text for chunk in chunks]


# --- properties over random documents -----------------------------------------------------------

WORDS = st.sampled_from(
    ["a", "to", "the", "index", "chunk", "naïve", "épée", "数据库", "Straße", "e\u0301t\u0301e",
     "x" * 40, "end.", "why?", "yes!", "clause,", "list:", "«quoted»", "(paren)", "3.14"]
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t", "\n", "\n\n", "\n \n", "\n\n\n", ". "])
HEADING = st.tuples(st.integers(1, 4), st.lists(WORDS, min_size=1, max_size=3)).map(
    lambda item: "\n" + "#" * item[0] + " " + " ".join(item[1]) + "\n"
)


@st.composite
def contents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(WORDS, SEPARATORS, HEADING), max_size=60))
    repeat = draw(st.integers(1, 12))  # long documents without thousands of draws
    return draw(st.sampled_from(["", " ", "\n"])) + "".join(parts) * repeat


@st.composite
def documents(draw: st.DrawFn) -> Document:
    content = draw(contents())
    kind = draw(st.sampled_from(["none", "markdown", "tiled", "messy"]))
    if kind == "markdown":
        return markdown_doc(content)
    if kind == "none" or not content:
        return doc(content)
    cuts = sorted(draw(st.sets(st.integers(0, len(content)), max_size=6)) | {0, len(content)})
    sections = []
    for index, (start, end) in enumerate(itertools.pairwise(cuts)):
        if kind == "messy":  # overlapping, nested, gapped or empty spans: must still be safe
            start = max(0, start - draw(st.integers(0, 5)))
            end = draw(st.sampled_from([end, max(start, end - 3), len(content)]))
        path = tuple(f"H{index}-{n}" for n in range(draw(st.integers(0, 3))))
        page = draw(st.one_of(st.none(), st.integers(1, 9)))
        sections.append(Section(start, end, path, len(path), page))
    return doc(content, tuple(sections))


def limit_of(chunker: Chunker) -> int:
    return getattr(chunker, "size", None) or chunker.max_size  # type: ignore[attr-defined]


@st.composite
def chunkers(draw: st.DrawFn) -> Chunker:
    counter = draw(st.one_of(st.none(), st.integers(1, 12).map(WordCounter)))
    size = draw(st.integers(8, 240))
    kind = draw(st.sampled_from(["recursive", "fixed", "paragraph", "markdown"]))
    if kind == "recursive":
        return RecursiveChunker(size, draw(st.integers(0, size - 1)), token_counter=counter)
    if kind == "fixed":
        return FixedWindowChunker(size, draw(st.integers(0, size - 1)), token_counter=counter)
    if kind == "paragraph":
        min_size = draw(st.integers(0, size))
        return ParagraphChunker(size, min_size=min_size, token_counter=counter)
    return MarkdownHeadingChunker(size, token_counter=counter)


def assert_exact_trimmed_bounded_ordered(
    document: Document, chunker: Chunker, chunks: list[Chunk]
) -> None:
    content = document.content
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    counter = chunker.token_counter  # type: ignore[attr-defined]
    for chunk in chunks:
        assert content[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text) <= limit_of(chunker)
        if counter is not None:
            assert counter.count_tokens(chunk.text) <= counter.max_tokens
        assert chunk.document_id == document.id
        assert chunk.id == chunk_id_for(document.id, chunk.char_start, chunk.text)
        json.dumps(dict(chunk.metadata))  # plain, serializable metadata
    starts = [chunk.char_start for chunk in chunks]
    ends = [chunk.char_end for chunk in chunks]
    assert starts == sorted(set(starts)) and ends == sorted(set(ends))  # document order


def assert_nothing_lost(document: Document, chunks: list[Chunk]) -> None:
    covered = bytearray(len(document.content))
    for chunk in chunks:
        covered[chunk.char_start : chunk.char_end] = b"\x01" * len(chunk.text)
    lost = [
        (position, char)
        for position, char in enumerate(document.content)
        if not covered[position] and not char.isspace()
    ]
    assert lost == []


def assert_one_section_each(document: Document, chunks: list[Chunk]) -> None:
    sections = tile_sections(document)
    for chunk in chunks:
        (section,) = [s for s in sections if s.char_start <= chunk.char_start < s.char_end]
        assert chunk.char_end <= section.char_end
        assert chunk.metadata["breadcrumb"] == section.breadcrumb
        assert chunk.metadata["heading_path"] == list(section.heading_path)
        assert chunk.metadata.get("page") == section.page


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), chunkers())
def test_chunking_invariants(document: Document, chunker: Chunker) -> None:
    """Exact trimmed slices within the size and token window, in order, with ids from their
    content; every non-whitespace character kept; one section (and breadcrumb) per chunk."""
    chunks = chunker.chunk(document)
    assert_exact_trimmed_bounded_ordered(document, chunker, chunks)
    assert_nothing_lost(document, chunks)
    assert_one_section_each(document, chunks)


@settings(max_examples=60, deadline=None)
@given(documents(), chunkers(), st.data())
def test_ids_are_stable_and_follow_the_text(
    document: Document, chunker: Chunker, data: st.DataObject
) -> None:
    first = chunker.chunk(document)
    assert first == chunker.chunk(document)
    letters = [i for i, char in enumerate(document.content) if char in "aeinx"]
    if not letters:
        return
    position = data.draw(st.sampled_from(letters))
    changed = document.content[:position] + "Q" + document.content[position + 1 :]
    edited = Document(document.id, document.source, changed, sections=document.sections)
    old_ids = {chunk.id for chunk in first}
    touching = [c for c in chunker.chunk(edited) if c.char_start <= position < c.char_end]
    assert touching and all(chunk.id not in old_ids for chunk in touching)


def test_ids_differ_between_documents_with_the_same_text() -> None:
    one = RecursiveChunker(50, 0).chunk(doc("same words here", source="a.txt"))
    two = RecursiveChunker(50, 0).chunk(doc("same words here", source="b.txt"))
    assert texts(one) == texts(two)
    assert one[0].id != two[0].id


class TestWholeDocumentChunker:
    def test_one_trimmed_chunk_across_sections(self) -> None:
        document = Document.from_text("a.md", "  # One\n\nfirst\n\n# Two\n\nsecond \n")
        (chunk,) = create_chunker("document", token_counter=None).chunk(document)
        assert chunk.text == "# One\n\nfirst\n\n# Two\n\nsecond"
        assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.id == chunk_id_for(document.id, 2, chunk.text) and chunk.index == 0

    def test_blank_documents_have_no_chunks(self) -> None:
        assert WholeDocumentChunker().chunk(doc(" \n\t ")) == []


# --- recursive ----------------------------------------------------------------------------------


class TestRecursiveChunker:
    def test_short_text_is_one_chunk(self) -> None:
        chunks = RecursiveChunker().chunk(doc("  Hello world.  \n"))
        assert texts(chunks) == ["Hello world."]
        assert (chunks[0].char_start, chunks[0].char_end) == (2, 14)
        assert chunks[0].metadata == {"breadcrumb": "", "heading_path": []}

    def test_empty_and_blank_documents_have_no_chunks(self) -> None:
        assert RecursiveChunker().chunk(doc("")) == []
        assert RecursiveChunker().chunk(doc(" \n\n\t ")) == []

    def test_packs_paragraphs_and_cuts_between_them(self) -> None:
        paragraphs = ["Alpha one two.", "Beta three four.", "Gamma five six.", "Delta seven."]
        chunks = RecursiveChunker(size=35, overlap=0).chunk(doc("\n\n".join(paragraphs)))
        assert texts(chunks) == [
            "Alpha one two.\n\nBeta three four.",
            "Gamma five six.\n\nDelta seven.",
        ]

    def test_prefers_sentence_ends_to_word_breaks(self) -> None:
        text = "The first sentence is here. The second one follows it closely."
        chunks = RecursiveChunker(size=40, overlap=0).chunk(doc(text))
        assert texts(chunks) == [
            "The first sentence is here.",
            "The second one follows it closely.",
        ]

    def test_never_cuts_inside_a_word_when_spaces_exist(self) -> None:
        text = " ".join(["lorem", "ipsum", "dolorous", "sitting", "ametistic"] * 30)
        for chunk in RecursiveChunker(size=37, overlap=0).chunk(doc(text)):
            assert chunk.char_end == len(text) or text[chunk.char_end] == " "
            assert chunk.char_start == 0 or text[chunk.char_start - 1] == " "

    def test_a_word_longer_than_size_is_cut_by_characters(self) -> None:
        chunks = RecursiveChunker(size=10, overlap=0).chunk(doc("tiny " + "x" * 25 + " end"))
        assert texts(chunks) == ["tiny", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx end"]

    def test_combining_marks_stay_with_their_letter(self) -> None:
        text = "e\u0301" * 12  # no spaces: hard cuts, but never between e and its accent
        for chunk in RecursiveChunker(size=5, overlap=0).chunk(doc(text)):
            assert chunk.text[0] == "e"

    def test_cjk_sentences(self) -> None:
        text = "数据库很好。检索很快！答案准确？"
        assert texts(RecursiveChunker(size=8, overlap=0).chunk(doc(text))) == [
            "数据库很好。",
            "检索很快！",
            "答案准确？",
        ]

    def test_overlap_repeats_the_previous_tail_from_a_sentence_start(self) -> None:
        text = "One two three. Four five six. Seven eight nine. Ten eleven twelve."
        chunks = RecursiveChunker(size=32, overlap=18).chunk(doc(text))
        assert texts(chunks) == [
            "One two three. Four five six.",
            "Four five six. Seven eight nine.",
            "Seven eight nine. Ten eleven",
            "Ten eleven twelve.",
        ]
        for before, after in itertools.pairwise(chunks):
            assert 0 < before.char_end - after.char_start <= 18

    def test_overlap_falls_back_to_a_word_start(self) -> None:
        text = "aaa bbb ccc ddd eee fff ggg hhh iii jjj"
        chunks = RecursiveChunker(size=16, overlap=6).chunk(doc(text))
        for before, after in itertools.pairwise(chunks):
            assert text[after.char_start - 1] == " "
            assert after.char_start < before.char_end

    def test_heading_stays_with_the_text_below(self) -> None:
        body = " ".join(f"Sentence number {n} is here." for n in range(12))
        document = markdown_doc(f"# Title\n\n## Setup\n\n{body}\n")
        chunks = RecursiveChunker(size=120, overlap=0).chunk(document)
        setup = [c for c in chunks if c.metadata["breadcrumb"] == "Title > Setup"]
        # "# Title" has no text of its own: it goes with its first subsection.
        assert setup[0].text.startswith("# Title\n\n## Setup\n\nSentence number 0")
        assert setup[1].text.startswith("Sentence number")

    def test_a_bare_heading_goes_with_its_first_subsection(self) -> None:
        body = "Sentence number 0 is here."
        text = f"# Title\n\n## Setup\n\n### Linux\n\n{body}\n\n## Usage\n\nRun it.\n"
        chunks = RecursiveChunker(size=500, overlap=0).chunk(markdown_doc(text))
        assert texts(chunks) == [
            f"# Title\n\n## Setup\n\n### Linux\n\n{body}",
            "## Usage\n\nRun it.",
        ]
        assert chunks[0].metadata["breadcrumb"] == "Title > Setup > Linux"
        # A heading followed by a sibling, not a subsection, keeps its own chunk.
        sibling = RecursiveChunker(500, 0).chunk(markdown_doc("## Empty\n\n## Next\n\nText.\n"))
        assert texts(sibling) == ["## Empty", "## Next\n\nText."]

    def test_front_matter_is_metadata_never_a_chunk(self) -> None:
        text = (
            "---\ntitle: Review guide\nupdated: 2024-10-07\n---\n\n"
            "# Review guide\n\n## Size\n\nSmall.\n"
        )
        document = markdown_doc(text)
        parsed = MarkdownParser().parse(text.encode(), "doc.md")
        assert parsed.metadata == {"title": "Review guide", "updated": "2024-10-07"}
        for chunker in (RecursiveChunker(500, 0), MarkdownHeadingChunker()):
            chunks = chunker.chunk(document)
            assert texts(chunks) == ["# Review guide\n\n## Size\n\nSmall."]
            assert all(text[c.char_start : c.char_end] == c.text for c in chunks)

    @pytest.mark.parametrize(
        ("size", "overlap"), [(0, 0), (-5, 0), (10, 10), (10, -1), (True, 0), (10.5, 0)]
    )
    def test_invalid_sizes(self, size: object, overlap: object) -> None:
        with pytest.raises(ConfigError):
            RecursiveChunker(size, overlap)  # type: ignore[arg-type]

    def test_token_window_splits_further(self) -> None:
        text = "one two three four five six seven eight nine ten. eleven twelve."
        chunks = RecursiveChunker(1000, 0, token_counter=WordCounter(4)).chunk(doc(text))
        assert all(len(chunk.text.split()) <= 4 for chunk in chunks)
        assert " ".join(texts(chunks)) == text

    def test_token_window_prefers_sentence_boundaries(self) -> None:
        text = "Aa bb cc dd. Ee ff gg hh."
        chunks = RecursiveChunker(1000, 0, token_counter=WordCounter(5)).chunk(doc(text))
        assert texts(chunks) == ["Aa bb cc dd.", "Ee ff gg hh."]

    def test_invalid_token_window(self) -> None:
        with pytest.raises(ConfigError, match="max_tokens"):
            RecursiveChunker(token_counter=WordCounter(0)).chunk(doc("text"))

    def test_large_document(self) -> None:
        paragraph = "Retrieval needs good chunks. " * 30
        text = "\n\n".join(f"{n}. {paragraph}" for n in range(400))  # ~350 KB
        chunks = RecursiveChunker().chunk(doc(text))
        assert all(len(chunk.text) <= 1000 for chunk in chunks)
        assert chunks[-1].char_end == len(text.rstrip())


# --- paragraph ----------------------------------------------------------------------------------


class TestParagraphChunker:
    def test_one_chunk_per_paragraph(self) -> None:
        text = "First para\nstill first.\n\n  Second para.  \n \n\n\nThird."
        chunks = ParagraphChunker().chunk(doc(text))
        assert texts(chunks) == ["First para\nstill first.", "Second para.", "Third."]

    def test_long_paragraph_is_split_recursively(self) -> None:
        text = "Short.\n\n" + "Word " * 30 + "end.\n\nTail."
        chunks = ParagraphChunker(max_size=50).chunk(doc(text))
        assert texts(chunks)[0] == "Short."
        assert texts(chunks)[-1] == "Tail."
        assert all(len(chunk.text) <= 50 for chunk in chunks)
        assert len(chunks) > 3

    def test_min_size_merges_short_neighbours(self) -> None:
        text = "a1\n\nb2\n\nc3\n\n" + "long paragraph text" + "\n\nd4"
        chunks = ParagraphChunker(max_size=30, min_size=8).chunk(doc(text))
        assert texts(chunks) == ["a1\n\nb2\n\nc3", "long paragraph text\n\nd4"]

    def test_min_size_never_exceeds_max_size(self) -> None:
        text = "\n\n".join(["abcdefgh"] * 6)
        chunks = ParagraphChunker(max_size=20, min_size=20).chunk(doc(text))
        assert texts(chunks) == ["abcdefgh\n\nabcdefgh"] * 3

    def test_invalid_options(self) -> None:
        with pytest.raises(ConfigError, match="min_size"):
            ParagraphChunker(max_size=10, min_size=11)
        with pytest.raises(ConfigError, match="max_size"):
            ParagraphChunker(max_size=0)


# --- markdown headings --------------------------------------------------------------------------

HANDBOOK = """# Guide

Welcome text.

## Install

Install text.

### Linux

Linux text.
"""


class TestMarkdownHeadingChunker:
    def test_one_chunk_per_section_with_breadcrumbs(self) -> None:
        chunks = MarkdownHeadingChunker().chunk(markdown_doc(HANDBOOK))
        assert texts(chunks) == [
            "# Guide\n\nWelcome text.",
            "## Install\n\nInstall text.",
            "### Linux\n\nLinux text.",
        ]
        assert [c.metadata["breadcrumb"] for c in chunks] == [
            "Guide",
            "Guide > Install",
            "Guide > Install > Linux",
        ]
        assert chunks[2].metadata["heading_path"] == ["Guide", "Install", "Linux"]

    def test_oversized_section_keeps_its_heading_in_the_first_piece(self) -> None:
        body = "\n\n".join(["A long paragraph of text that goes on. " * 3] * 4)
        chunks = MarkdownHeadingChunker(max_size=150).chunk(markdown_doc(f"## Big\n\n{body}"))
        assert len(chunks) > 1
        assert chunks[0].text.startswith("## Big\n\nA long paragraph")
        assert all(len(chunk.text) <= 150 for chunk in chunks)

    def test_setext_heading_stays_whole(self) -> None:
        document = markdown_doc("Big\n===\n" + "words and more words " * 10)
        chunks = MarkdownHeadingChunker(max_size=60).chunk(document)
        assert chunks[0].text.startswith("Big\n===\nwords")

    def test_page_numbers_are_carried(self) -> None:
        content = "Page one text.\fPage two text."
        sections = (Section(0, 15, page=1), Section(15, len(content), page=2))
        chunks = MarkdownHeadingChunker().chunk(doc(content, sections))
        assert [c.metadata for c in chunks] == [
            {"breadcrumb": "", "heading_path": [], "page": 1},
            {"breadcrumb": "", "heading_path": [], "page": 2},
        ]

    def test_document_without_sections_is_one_chunk(self) -> None:
        assert texts(MarkdownHeadingChunker().chunk(doc("just text\n\nmore"))) == [
            "just text\n\nmore"
        ]


# --- fixed windows ------------------------------------------------------------------------------


class TestFixedWindowChunker:
    def test_windows_snap_to_whitespace(self) -> None:
        text = "abcd efgh ijkl mnop qrst"
        chunks = FixedWindowChunker(size=12, overlap=0).chunk(doc(text))
        assert texts(chunks) == ["abcd efgh", "ijkl mnop", "qrst"]

    def test_overlap_starts_at_a_word(self) -> None:
        text = "abcd efgh ijkl mnop qrst uvwx"
        chunks = FixedWindowChunker(size=14, overlap=6).chunk(doc(text))
        assert texts(chunks) == ["abcd efgh ijkl", "ijkl mnop qrst", "qrst uvwx"]

    def test_long_word_is_cut_and_progress_is_made(self) -> None:
        chunks = FixedWindowChunker(size=4, overlap=2).chunk(doc("x" * 10))
        assert "".join(texts(chunks)) == "x" * 10
        assert all(len(chunk.text) <= 4 for chunk in chunks)

    def test_windows_restart_at_each_section(self) -> None:
        content = "aaa bbb ccc ddd"
        sections = (Section(0, 8, ("A",), 1), Section(8, len(content), ("B",), 1))
        chunks = FixedWindowChunker(size=100, overlap=10).chunk(doc(content, sections))
        assert texts(chunks) == ["aaa bbb", "ccc ddd"]
        assert [c.metadata["breadcrumb"] for c in chunks] == ["A", "B"]

    def test_invalid_overlap(self) -> None:
        with pytest.raises(ConfigError, match="overlap"):
            FixedWindowChunker(size=10, overlap=10)


# --- factory ------------------------------------------------------------------------------------


class TestCreateChunker:
    @pytest.mark.parametrize(
        ("name", "cls"),
        [
            ("recursive", RecursiveChunker),
            ("paragraph", ParagraphChunker),
            ("markdown", MarkdownHeadingChunker),
            ("fixed", FixedWindowChunker),
            ("Fixed", FixedWindowChunker),
        ],
    )
    def test_names(self, name: str, cls: type) -> None:
        assert isinstance(create_chunker(name), cls)

    def test_default_is_recursive_and_options_are_passed(self) -> None:
        chunker = create_chunker(size=300, overlap=30)
        assert isinstance(chunker, RecursiveChunker)
        assert (chunker.size, chunker.overlap) == (300, 30)
        counter = WordCounter(8)
        assert create_chunker("markdown", token_counter=counter).token_counter is counter  # type: ignore[attr-defined]

    def test_unknown_name_lists_the_valid_ones(self) -> None:
        with pytest.raises(ConfigError, match="recursive, paragraph, sentence, markdown, fixed"):
            create_chunker("semantic")

    def test_unknown_option_names_the_valid_ones(self) -> None:
        with pytest.raises(ConfigError, match=r"does not take size.*max_size"):
            create_chunker("markdown", size=10)

    def test_invalid_option_value(self) -> None:
        with pytest.raises(ConfigError):
            create_chunker("fixed", size=10, overlap=20)
