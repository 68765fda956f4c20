"""The parser registry: claims on content types, and detection by extension and magic bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from office_files import build_docx
from ragwright import Index
from ragwright.errors import ParseError, RegistryError
from ragwright.models import ParsedDocument
from ragwright.parsers import HtmlParser, ParserRegistry, TextParser


class ZipThing:
    """A parser whose files are zip archives (as Office files are)."""

    extensions: tuple[str, ...] = (".zthing",)
    content_types: tuple[str, ...] = ("application/x-zthing",)
    magic: tuple[bytes, ...] = (b"PK\x03\x04",)

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content=f"{len(data)} bytes")


class OtherHtml:
    """A second parser claiming HTML's content type under another extension."""

    extensions: tuple[str, ...] = (".page",)
    content_types: tuple[str, ...] = ("TEXT/HTML",)

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content=data.decode())


def test_two_parsers_claiming_one_content_type_is_an_error_naming_both() -> None:
    registry = ParserRegistry([HtmlParser()])
    with pytest.raises(
        RegistryError,
        match=r"parsers 'html' and 'otherhtml' both claim content type 'text/html'; "
        r"register one with replaces='html'",
    ):
        registry.register(OtherHtml())
    assert registry.names == ("html",)
    assert not registry.supports("x.page")  # a refused registration leaves nothing behind


def test_replaces_takes_over_the_content_types_too() -> None:
    registry = ParserRegistry([HtmlParser(), TextParser()])
    registry.register(OtherHtml(), replaces="html")
    assert registry.names == ("otherhtml", "text")
    assert "text/html" in registry.content_types
    assert "application/xhtml+xml" not in registry.content_types
    assert not registry.supports("x.html")


def test_built_in_parsers_claim_distinct_content_types() -> None:
    registry = ParserRegistry.from_entry_points()
    assert {"text/plain", "text/markdown", "text/html", "application/pdf"} <= set(
        registry.content_types
    )


def test_magic_is_checked_only_when_declared_and_when_bytes_are_given() -> None:
    registry = ParserRegistry([ZipThing(), TextParser()])
    assert isinstance(registry.parser_for("a.zthing", b"PK\x03\x04rest"), ZipThing)
    assert isinstance(registry.parser_for("a.zthing"), ZipThing)  # no bytes, no check
    assert isinstance(registry.parser_for("a.txt", b"\x89PNG anything"), TextParser)
    with pytest.raises(ParseError) as caught:
        registry.parser_for("deck.zthing", b"%PDF-1.4 not a zip at all")
    assert caught.value.source == "deck.zthing"
    assert caught.value.reason == "not a ZTHING file: it looks like a PDF document"


def test_magic_within_lets_bytes_come_before_the_signature() -> None:
    class Late(ZipThing):
        magic_within = 8

    registry = ParserRegistry([Late()])
    assert isinstance(registry.parser_for("a.zthing", b"\r\n\xef\xbb\xbfPK\x03\x04rest"), Late)
    assert isinstance(registry.parser_for("a.zthing", b"12345678PK\x03\x04"), Late)
    with pytest.raises(ParseError, match="not a ZTHING file"):
        registry.parser_for("a.zthing", b"123456789PK\x03\x04")  # starts past the window


@pytest.mark.parametrize("within", [-1, 1.5, True], ids=["negative", "float", "bool"])
def test_malformed_magic_within_is_a_registry_error(within: object) -> None:
    class Bad(ZipThing):
        pass

    Bad.magic_within = within  # type: ignore[attr-defined]
    with pytest.raises(RegistryError, match="magic_within"):
        ParserRegistry([Bad()])


@pytest.mark.parametrize("magic", [b"", b"x" * 17, "PK"], ids=["empty", "too-long", "str"])
def test_malformed_magic_is_a_registry_error(magic: object) -> None:
    class Bad(ZipThing):
        pass

    Bad.magic = (magic,)  # type: ignore[assignment]
    with pytest.raises(RegistryError, match="must declare magic as a tuple of byte strings"):
        ParserRegistry([Bad()])


def test_ingest_reports_a_file_whose_bytes_contradict_its_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "saved-page.pdf").write_text("<html><body>Not a PDF</body></html>", "utf-8")
    (docs / "notes.txt").write_text("Plain notes.", "utf-8")
    with Index(tmp_path / "index", embedder="hashing") as kb:
        report = kb.ingest([docs])
    assert report.added == ["docs/notes.txt"]
    assert [(f.source, f.reason) for f in report.failed] == [
        (
            "docs/saved-page.pdf",
            "not a PDF file: it looks like HTML",
        )
    ]


def test_the_registry_imports_no_pdf_library() -> None:
    code = (
        "import sys; from ragwright.parsers import ParserRegistry; "
        "registry = ParserRegistry.from_entry_points(); "
        "print(registry.supports('a.pdf'), 'pypdfium2' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["True", "False"], result.stderr


def test_an_office_file_named_pdf_goes_to_its_own_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    build_docx(tmp_path / "report.docx")
    (tmp_path / "report.docx").rename(docs / "report.pdf")  # detection by bytes, not name
    (docs / "zipped.pdf").write_bytes(b"PK\x03\x04" + b"\x00" * 40)  # a broken zip
    with Index(tmp_path / "index", embedder="hashing") as kb:
        report = kb.ingest([docs])
        assert report.added == ["docs/report.pdf"]
        document = kb.documents.get("docs/report.pdf")
        assert document is not None and "Chapter 1 opens with" in document.content
    [(source, reason)] = [(f.source, f.reason) for f in report.failed]
    assert source == "docs/zipped.pdf"
    assert reason == (
        "not a PDF file: it looks like a ZIP archive (Word, Excel and PowerPoint files are "
        "ZIP archives)"
    )
    assert "\\x" not in reason and "b'" not in reason
