"""OCR of scanned PDF pages: Tesseract for real (installed by `make system-deps`), the engine
port, and what happens when OCR is off or not installed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pdf_files import build_scanned_pdf
from ragwright import Index
from ragwright.errors import ConfigError, MissingDependencyError, OcrError, ParseError
from ragwright.ocr import TesseractOcr
from ragwright.parsers.pdf import PAGE_BREAK, PdfParser
from ragwright.ports import GrayImage, OcrEngine

# None of these words is on the generated text pages (tests/pdf_files.py vocabulary).
SCANNED = "Invoice seventeen brass trumpets shipped to the Kingsbridge warehouse in November"
_tesseract_installed = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="the tesseract program is not installed (run `make system-deps`)",
)


def needs_tesseract(test: Callable[..., None]) -> Callable[..., None]:
    """Runs Tesseract (a subprocess per page), so it is slow; skipped where it is missing."""
    marked: Callable[..., None] = pytest.mark.slow(_tesseract_installed(test))
    return marked


def words(text: str) -> set[str]:
    return {word.strip(".,").lower() for word in text.split()}


@pytest.fixture
def scanned(tmp_path: Path) -> Path:
    path = tmp_path / "scan.pdf"
    build_scanned_pdf(path, SCANNED)
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Two text pages, then a scanned one."""
    path = tmp_path / "mixed.pdf"
    build_scanned_pdf(path, SCANNED, text_pages=2)
    return path


@needs_tesseract
def test_tesseract_reads_a_scanned_page(scanned: Path) -> None:
    document = PdfParser(ocr="tesseract").parse(scanned.read_bytes(), "scan.pdf")
    assert words(SCANNED) <= words(document.content)
    assert document.metadata["ocr_pages"] == [1]
    assert document.metadata["ocr_engine"].startswith("tesseract ")
    assert [section.page for section in document.sections] == [1]
    assert not document.warnings


@needs_tesseract
def test_only_pages_without_text_are_read_by_ocr(mixed: Path) -> None:
    document = PdfParser(ocr="tesseract").parse(mixed.read_bytes(), "mixed.pdf")
    pages = document.content.split(PAGE_BREAK)
    assert len(pages) == 3
    assert pages[0].startswith("Chapter 1\n\nPage 1 paragraph 1.")
    assert words(SCANNED) <= words(pages[2])
    assert document.metadata["ocr_pages"] == [3]


@needs_tesseract
def test_search_finds_words_of_the_scanned_page(
    mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_OCR", raising=False)
    with Index(tmp_path / "index", embedder="hashing") as kb:
        report = kb.ingest([mixed])
        assert report.ok and report.added == ["mixed.pdf"] and not report.warnings
        hits = kb.search("brass trumpets Kingsbridge", mode="bm25", top_k=1)
        assert hits and hits[0].chunk.metadata["page"] == 3
        assert "trumpets" in hits[0].chunk.text.lower()


def test_scanned_pages_without_ocr_are_a_warning_and_the_text_pages_are_kept(
    mixed: Path,
) -> None:
    document = PdfParser(ocr="off").parse(mixed.read_bytes(), "mixed.pdf")
    assert document.content.split(PAGE_BREAK)[2] == ""
    assert "ocr_pages" not in document.metadata
    assert document.warnings == (
        "page 3 has no text layer and went unread: OCR is disabled "
        "(RAGWRIGHT_OCR=off or ocr='off')",
    )


def test_a_wholly_scanned_pdf_without_ocr_is_a_parse_error(scanned: Path) -> None:
    with pytest.raises(ParseError, match=r"scan\.pdf: its page has a text layer \(a scan\?\)"):
        PdfParser(ocr="off").parse(scanned.read_bytes(), "scan.pdf")


def test_missing_tesseract_says_how_to_install(
    scanned: Path, mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no tesseract on the PATH
    monkeypatch.delenv("RAGWRIGHT_OCR", raising=False)
    parser = PdfParser()  # auto: OCR when installed
    assert parser.ocr is None
    with pytest.raises(ParseError, match=r"OCR is unavailable: .*apt-get install tesseract-ocr"):
        parser.parse(scanned.read_bytes(), "scan.pdf")
    (warning,) = parser.parse(mixed.read_bytes(), "mixed.pdf").warnings
    assert "page 3 has no text layer" in warning and "apt-get install tesseract-ocr" in warning
    with pytest.raises(MissingDependencyError, match="apt-get install tesseract-ocr"):
        PdfParser(ocr="tesseract")  # required, so its absence is an error at once
    monkeypatch.setenv("RAGWRIGHT_OCR", "tesseract")
    with pytest.raises(MissingDependencyError):
        PdfParser()


@needs_tesseract
def test_a_missing_language_pack_names_the_package() -> None:
    with pytest.raises(MissingDependencyError, match="apt-get install tesseract-ocr-xqz"):
        TesseractOcr(languages=("eng", "xqz"))


class RecordingOcr:
    """An OCR engine at the port: answers a fixed text and records the images it was shown."""

    name = "recording"
    version = "1"
    languages = ("eng",)

    def __init__(self) -> None:
        self.images: list[GrayImage] = []

    def recognize(self, image: GrayImage) -> str:
        self.images.append(image)
        return "Recognized  text\r\nfrom the engine \ufb01ne"


def test_any_engine_at_the_port_reads_the_rendered_page(scanned: Path) -> None:
    engine = RecordingOcr()
    assert isinstance(engine, OcrEngine)
    parser = PdfParser(ocr=engine, ocr_dpi=100)
    document = parser.parse(scanned.read_bytes(), "scan.pdf")
    assert document.content == "Recognized  text\nfrom the engine fine"
    (image,) = engine.images
    assert image.dpi == 100  # A4 is 595 x 842 points, 1/72 inch each
    assert abs(image.width - 595 / 72 * 100) <= 1 and abs(image.height - 842 / 72 * 100) <= 1
    assert len(image.pixels) == image.width * image.height
    assert min(image.pixels) < 64 and max(image.pixels) == 255  # dark text on white
    assert document.metadata["ocr_engine"] == "recording 1"
    assert parser.parse_settings == "ocr: recording 1 eng 100"


def test_languages_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("tesseract") is None:
        pytest.skip("the tesseract program is not installed (run `make system-deps`)")
    monkeypatch.setenv("RAGWRIGHT_OCR_LANGUAGES", "eng+osd")
    parser = PdfParser()
    assert parser.ocr is not None and parser.ocr.languages == ("eng", "osd")
    assert "tesseract" in parser.parse_settings and "eng+osd" in parser.parse_settings


def test_turning_ocr_on_re_reads_pdfs_at_the_next_ingest(
    mixed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGWRIGHT_OCR", "off")
    with Index(tmp_path / "index", embedder="hashing") as kb:
        first = kb.ingest([mixed])
        assert first.added == ["mixed.pdf"]
        assert [w.message for w in first.warnings] == [
            "page 3 has no text layer and went unread: OCR is disabled "
            "(RAGWRIGHT_OCR=off or ocr='off')"
        ]
        assert kb.ingest([mixed]).unchanged == ["mixed.pdf"]
        if shutil.which("tesseract") is None:
            return
        monkeypatch.setenv("RAGWRIGHT_OCR", "auto")
        assert kb.ingest([mixed]).updated == ["mixed.pdf"]


class BrokenOcr(RecordingOcr):
    def recognize(self, image: GrayImage) -> str:
        raise OcrError("tesseract failed (Error in pixReadMem)")


def test_an_ocr_failure_on_a_page_is_a_warning_and_the_other_pages_are_kept(
    mixed: Path,
) -> None:
    document = PdfParser(ocr=BrokenOcr()).parse(mixed.read_bytes(), "mixed.pdf")
    assert document.content.split(PAGE_BREAK)[0].startswith("Chapter 1")
    assert document.warnings == (
        "page 3 could not be read by OCR: tesseract failed (Error in pixReadMem)",
    )
    assert "ocr_pages" not in document.metadata


def test_a_text_layer_of_unmapped_glyphs_is_not_usable() -> None:
    parser = PdfParser(ocr=RecordingOcr(), min_text_chars=16)
    # Glyphs without a Unicode mapping come out as U+FFFD or private-use code points.
    assert parser._needs_ocr(None, "\ufffd\ue000\ue001 " * 20)  # type: ignore[arg-type]
    assert not parser._needs_ocr(None, "Readable text with an icon \ue000 in it.")  # type: ignore[arg-type]


def test_an_unknown_ocr_choice_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGWRIGHT_OCR", "abbyy")
    with pytest.raises(ConfigError, match="unknown OCR choice 'abbyy': use auto, off or tesseract"):
        PdfParser()


def test_a_huge_page_is_rendered_for_ocr_within_the_pixel_cap(tmp_path: Path) -> None:
    """A 200 x 200 inch page (the largest PDF allows) at 300 dpi would be 3.6 billion pixels:
    it is rendered at a lower resolution instead, and read."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    from ragwright.parsers.pdf import MAX_OCR_PIXELS

    path = tmp_path / "poster.pdf"
    side = 14_400.0  # points
    pdf = canvas.Canvas(str(path), pagesize=(side, side))
    pdf.drawImage(ImageReader(Image.new("L", (64, 64), 0)), 0, 0, width=side / 2, height=side / 2)
    pdf.showPage()
    pdf.save()
    engine = RecordingOcr()
    document = PdfParser(ocr=engine).parse(path.read_bytes(), "poster.pdf")
    (image,) = engine.images
    assert image.width * image.height <= MAX_OCR_PIXELS
    assert image.dpi == int(72 * (MAX_OCR_PIXELS / side**2) ** 0.5)  # 31 dpi
    assert abs(image.width - side / 72 * image.dpi) <= 1
    assert document.metadata["ocr_pages"] == [1]
