"""Document chunkers (parse and chunk fused) ahead of the parser + chunker path, installed as a
third party would install one: a module and its dist-info in the ``ragwright.document_chunkers``
entry-point group."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.errors import ParseError
from ragwright.index import ChunkingConfig
from ragwright.models import EMBEDDING_HEADER, KEYWORD_HEADER, ParsedDocument
from ragwright.pipeline.ingest.document_chunking import FusedFirst, FusedParser
from ragwright.ports import ChunkedDocument, ChunkSpan
from ragwright.testing import HashingEmbedder

PLUGIN = '''
import re

from ragwright.models import ParsedDocument, Section
from ragwright.ports import ChunkedDocument, ChunkSpan

HEADING = re.compile(r"^(#+) (.*)$", re.M)


class HeadingSlices:
    """One chunk per Markdown heading and the text under it, the heading line included;
    the stored text is the file's text with its line endings normalized."""

    extensions = (".md",)
    content_types = ("text/markdown",)

    def parse_chunks(self, data, source):
        text = data.decode("utf-8").replace("\\r\\n", "\\n")
        starts = [m.start() for m in HEADING.finditer(text)] or [0]
        ends = starts[1:] + [len(text)]
        spans, sections = [], []
        for start, end in zip(starts, ends):
            body = text[start:end].rstrip()
            heading = HEADING.match(text, start)
            name = heading.group(2) if heading else ""
            spans.append(ChunkSpan(start, start + len(body), {"heading": name}))
            level = len(heading.group(1)) if heading else 0
            sections.append(Section(start, start + len(body), (name,), level))
        metadata = {"slices": len(spans), "title": "Ops runbook"}
        document = ParsedDocument(text, tuple(sections), metadata, "text/markdown")
        return ChunkedDocument(document, tuple(spans))

    def __repr__(self):
        return "HeadingSlices()"


class PastTheEnd:
    """A broken converter: its one span runs past the text it returns."""

    extensions = (".broken",)
    content_types = ()

    def parse_chunks(self, data, source):
        text = data.decode("utf-8")
        return ChunkedDocument(ParsedDocument(text), (ChunkSpan(0, len(text) + 5),))
'''

MARKDOWN = (
    "# Rotation\r\nLogs rotate nightly at two.\r\nOld logs are gzipped.\r\n\r\n"
    "## Retention\r\nKeep thirty days of logs.\r\n\r\n# Alerts\r\nPages go to the on-call.\r\n"
)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    dist = site / "slices_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "slices_plugin.py").write_text(PLUGIN, "utf-8")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: slices-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[ragwright.document_chunkers]\n"
        "heading-slices = slices_plugin:HeadingSlices\n"
        "past-the-end = slices_plugin:PastTheEnd\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "slices_plugin", raising=False)


def test_a_document_chunker_claims_its_format_ahead_of_the_parser(
    tmp_path: Path, plugin: None
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_bytes(MARKDOWN.encode())
    (docs / "notes.txt").write_text("Plain text goes the parser and chunker way.\n")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report = kb.ingest([docs], base=docs)
        assert report.ok and sorted(report.added) == ["notes.txt", "ops.md"]
        document = kb.document("ops.md")
        assert document is not None
        assert "\r" not in document.content  # the text the converter returned is stored
        assert document.metadata["slices"] == 3
        chunks = kb.chunks_of(document.id)
        assert [c.metadata["heading"] for c in chunks] == ["Rotation", "Retention", "Alerts"]
        first_lines = [c.text.splitlines()[0] for c in chunks]
        assert first_lines == ["# Rotation", "## Retention", "# Alerts"]
        for chunk in chunks:  # offsets index the stored text exactly
            assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        hit = kb.search("thirty days retention", mode="bm25", top_k=1)[0]
        assert hit.chunk.metadata["heading"] == "Retention"
        assert hit.chunk.text == "## Retention\nKeep thirty days of logs."
        (plain,) = kb.chunks_of(kb.document("notes.txt").id)  # type: ignore[union-attr]
        assert "heading" not in plain.metadata
        # Unchanged files are not read again; the chunks are the same after a second run.
        again = kb.ingest([docs], base=docs)
        assert sorted(again.unchanged) == ["notes.txt", "ops.md"]
        assert [c.id for c in kb.chunks_of(document.id)] == [c.id for c in chunks]


def test_the_chunkings_context_headers_reach_a_document_chunkers_chunks(
    tmp_path: Path, plugin: None
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_bytes(MARKDOWN.encode())
    headers = ChunkingConfig("recursive", {"context_headers": "keywords"})
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest([docs], base=docs, chunking=headers)
        document = kb.document("ops.md")
        assert document is not None
        chunks = kb.chunks_of(document.id)
        assert [c.metadata["heading"] for c in chunks] == ["Rotation", "Retention", "Alerts"]
        # Each slice lacks the title, so BM25 reads it in front; the span stays exact.
        assert [c.metadata.get(KEYWORD_HEADER) for c in chunks] == ["Ops runbook"] * 3
        assert all(c.keyword_text.startswith("Ops runbook") for c in chunks)
        assert EMBEDDING_HEADER not in chunks[0].metadata
        for chunk in chunks:
            assert document.content[chunk.char_start : chunk.char_end] == chunk.text
        hit = kb.search("runbook thirty days", mode="bm25", top_k=1)[0]
        assert hit.chunk.metadata["heading"] == "Retention"


def test_a_span_outside_the_text_fails_that_file_alone(tmp_path: Path, plugin: None) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.broken").write_text("some text")
    (docs / "good.md").write_text("# Title\nBody.\n")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report = kb.ingest([docs], base=docs)
        assert report.added == ["good.md"]
        (failure,) = report.failed
        assert failure.source == "bad.broken" and "past the end of its text" in failure.reason
        assert kb.document("bad.broken") is None


class _Fixed:
    extensions = (".txt",)
    content_types = ()

    def __init__(self, spans: tuple[ChunkSpan, ...]) -> None:
        self.spans = spans

    def parse_chunks(self, data: bytes, source: str) -> ChunkedDocument:
        return ChunkedDocument(ParsedDocument(data.decode()), self.spans)


@pytest.mark.parametrize(
    ("spans", "says"),
    [
        ((ChunkSpan(3, 3),), "empty span"),
        ((ChunkSpan(4, 6), ChunkSpan(0, 2)), "not in document order"),
        ((ChunkSpan(0, 99),), "past the end"),
    ],
)
def test_bad_spans_are_a_parse_error(spans: tuple[ChunkSpan, ...], says: str) -> None:
    with pytest.raises(ParseError, match=says):
        FusedParser(_Fixed(spans)).parse(b"abcdefgh", "x.txt")


def test_two_document_chunkers_claiming_one_extension_are_refused() -> None:
    from ragwright.errors import RegistryError
    from ragwright.parsers.registry import ParserRegistry

    parsers = ParserRegistry.from_entry_points()
    with pytest.raises(RegistryError, match=r"both claim '\.txt'"):
        FusedFirst([_Fixed(()), _Fixed(())], parsers)
    lookup = FusedFirst([_Fixed(())], parsers)
    assert isinstance(lookup.parser_for("a.txt"), FusedParser)
    assert not isinstance(lookup.parser_for("a.md"), FusedParser)
    assert lookup.supports("a.pdf") and ".txt" in lookup.extensions
