from __future__ import annotations

from ragwright.chunkers import RecursiveChunker
from ragwright.models import Arm, Chunk, Document, Hit, Scale, document_id_for
from ragwright.parsers.markdown import MarkdownParser
from ragwright.processors import ParentSection, create_result_processor
from ragwright.processors.parent_section import SECTION_HITS

GUIDE = """# Guide

## Install

Download the package from the website. Unpack it into a folder of your choice.
Run the installer and follow the steps it shows on screen.

## Backups

Backups run every night at two in the morning. They are kept for thirty days.
"""


class Documents:
    """An in-memory `DocumentLookup`."""

    def __init__(self, *documents: Document) -> None:
        self.by_id = {d.id: d for d in documents}
        self.calls = 0

    def get_document(self, document_id: str) -> Document | None:
        self.calls += 1
        return self.by_id.get(document_id)


def _guide() -> Document:
    parsed = MarkdownParser().parse(GUIDE.encode(), "guide.md")
    return Document(
        document_id_for("guide.md"), "guide.md", parsed.content, parsed.metadata, parsed.sections
    )


def _hit(chunk: Chunk, score: float, arm: Arm = Arm.BM25) -> Hit:
    return Hit(chunk, score, Scale.FUSED, frozenset({arm}), "guide.md")


def test_small_chunks_become_their_section_with_the_hits_that_selected_it() -> None:
    document = _guide()
    chunks = RecursiveChunker(size=60, overlap=0).chunk(document)
    install = [c for c in chunks if c.metadata["heading_path"][-1] == "Install"]
    backups = [c for c in chunks if c.metadata["heading_path"][-1] == "Backups"]
    assert len(install) >= 2  # the section was cut into several small chunks
    hits = [_hit(install[1], 0.9), _hit(backups[0], 0.8), _hit(install[0], 0.7, Arm.VECTOR)]
    lookup = Documents(document)
    out = ParentSection(lookup).process("how do I install", hits)
    assert len(out) == 2  # the two Install hits merged, at the best one's position
    section = out[0].chunk
    assert document.content[section.char_start : section.char_end] == section.text
    # "# Guide" has no text of its own: it goes with its first subsection.
    assert section.text.startswith("# Guide\n\n## Install") and section.text.endswith("on screen.")
    assert section.metadata[SECTION_HITS] == (install[1].id, install[0].id)
    assert out[0].score == 0.9 and out[0].arms == {Arm.BM25, Arm.VECTOR}
    assert out[1].chunk.text.startswith("## Backups")
    assert lookup.calls == 1  # one lookup per document


def test_a_hit_without_its_document_or_over_the_size_is_kept_as_it_is() -> None:
    document = _guide()
    chunks = RecursiveChunker(size=60, overlap=0).chunk(document)
    hits = [_hit(chunks[1], 0.5)]
    assert ParentSection(Documents()).process("q", hits) == hits
    assert ParentSection(Documents(document), max_chars=20).process("q", hits) == hits


def test_it_is_built_by_name() -> None:
    processor = create_result_processor("parent_section", documents=Documents(), max_chars=100)
    assert isinstance(processor, ParentSection) and processor.max_chars == 100
