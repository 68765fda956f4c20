"""Which PDF library should read text layers? Speed and extraction quality on generated PDFs.

    python benchmarks/pdf_libraries.py [--pages 60] [--repeat 3]

Candidates (permissive licences only; PyMuPDF is AGPL): pypdfium2, pypdf, pdfminer.six,
pdfplumber. Each reads the same generated files in this process:

- speed: pages/s over a ``--pages`` text PDF (tests/pdf_files.py), best of ``--repeat``;
- recall: the share of the expected words recovered (as a multiset);
- order: on a two-column page, does the left column come out before the right one?
- ligatures: are "ﬁ", "ﬀ", "ﬂ", "ﬃ" glyphs read as plain letters ("find", "office")?
- hyphens: is a word hyphenated across a line break ("exam-" / "ple") read whole? ("marked":
  pdfium puts U+FFFE where it removed the hyphen, so a caller can join the word);
- paragraphs: are paragraphs separated by a blank line?

Prints one row per library and the speed ratio against pypdf (the pure-Python baseline); the
first row is ragwright's own parser (pypdfium2 plus its cleanup, outline and sections).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from pdf_files import build_scanned_pdf, build_text_pdf

# A font with ligature glyphs (Debian fonts-dejavu-core); without it the ligature row is "n/a".
LIGATURE_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
WORD = re.compile(r"\w+")

Extract = Callable[[Path], list[str]]


def pypdfium2_pages(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        return [page.get_textpage().get_text_range() for page in document]
    finally:
        document.close()


def pypdf_pages(path: Path) -> list[str]:
    import pypdf

    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


def pdfminer_pages(path: Path) -> list[str]:
    from pdfminer.high_level import extract_text

    return extract_text(path).split("\f")[:-1]


def pdfplumber_pages(path: Path) -> list[str]:
    import pdfplumber

    with pdfplumber.open(path) as document:
        return [page.extract_text() for page in document.pages]


def ragwright_pages(path: Path) -> list[str]:
    from ragwright.parsers.pdf import PAGE_BREAK, PdfParser

    return PdfParser(ocr="off").parse(path.read_bytes(), path.name).content.split(PAGE_BREAK)


LIBRARIES: dict[str, Extract] = {
    "ragwright": ragwright_pages,  # pypdfium2 plus the parser's cleanup, outline and sections
    "pypdfium2": pypdfium2_pages,
    "pypdf": pypdf_pages,
    "pdfminer.six": pdfminer_pages,
    "pdfplumber": pdfplumber_pages,
}


def build_layout_pdf(path: Path) -> bool:
    """One page with a hyphenated line break, ligature glyphs, two paragraphs and two columns.
    Returns whether the ligature line could be written (it needs a TrueType font)."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setFont("Helvetica", 11)
    lines = ["The first paragraph has two lines and an exam-", "ple of a hyphenated word."]
    for index, line in enumerate(lines):
        pdf.drawString(72, 760 - 14 * index, line)
    pdf.drawString(72, 718, "The second paragraph follows a blank line.")
    ligatures = LIGATURE_FONT.exists()
    if ligatures:
        pdfmetrics.registerFont(TTFont("DejaVuSans", str(LIGATURE_FONT)))
        pdf.setFont("DejaVuSans", 11)
        pdf.drawString(
            72, 690, "We \ufb01nd the o\ufb03ce \ufb02ow and the sta\ufb00 e\ufb03cient."
        )
        pdf.setFont("Helvetica", 11)
    for index in range(6):
        pdf.drawString(72, 600 - 14 * index, f"Left column line {index}.")
        pdf.drawString(320, 600 - 14 * index, f"Right column line {index}.")
    pdf.showPage()
    pdf.save()
    return ligatures


def recall(expected: list[str], text: str) -> float:
    want = Counter(expected)
    got = Counter(WORD.findall(text))
    return sum(min(count, got[word]) for word, count in want.items()) / sum(want.values())


def quality(extract: Extract, layout: Path, ligatures: bool) -> dict[str, str]:
    text = "\n".join(extract(layout))
    left_end, right_start = text.find("Left column line 5"), text.find("Right column line 0")
    words = set(WORD.findall(text))
    return {
        "order": "yes" if -1 < left_end < right_start else "no",
        "ligatures": (
            ("yes" if {"find", "office", "flow", "staff", "efficient"} <= words else "no")
            if ligatures
            else "n/a"
        ),
        "hyphens": "yes" if "example" in words else ("marked" if "exam\ufffeple" in text else "no"),
        "paragraphs": "yes" if re.search(r"word\.\s*\n\s*\n\s*The second", text) else "no",
    }


def speed(extract: Extract, path: Path, pages: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        extract(path)
        best = min(best, time.perf_counter() - start)
    return pages / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scans", type=int, default=3, help="scanned pages for the OCR row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        text_pdf, layout = Path(folder) / "text.pdf", Path(folder) / "layout.pdf"
        plan = build_text_pdf(text_pdf, pages=args.pages)
        expected = [word for page in plan for p in page.paragraphs for word in WORD.findall(p)]
        ligatures = build_layout_pdf(layout)
        rows = []
        for name, extract in LIBRARIES.items():
            try:
                pages_per_second = speed(extract, text_pdf, args.pages, args.repeat)
            except ImportError as error:
                print(f"{name}: not installed ({error.name})")
                continue
            text = "\n".join(extract(text_pdf))
            rows.append(
                (
                    name,
                    pages_per_second,
                    recall(expected, text),
                    quality(extract, layout, ligatures),
                )
            )
        ocr = ocr_seconds_per_page(Path(folder) / "scans.pdf", args.scans)
    baseline = next((row[1] for row in rows if row[0] == "pypdf"), None)
    header = f"{'library':<13} {'pages/s':>8} {'vs pypdf':>8} {'recall':>7}"
    print(f"{header}  order  ligatures  hyphens  paragraphs   ({args.pages} pages)")
    for name, pages_per_second, share, checks in rows:
        ratio = f"{pages_per_second / baseline:.1f}x" if baseline else "-"
        print(
            f"{name:<13} {pages_per_second:>8.1f} {ratio:>8} {share:>7.3f}  {checks['order']:<5}  "
            f"{checks['ligatures']:<9}  {checks['hyphens']:<7}  {checks['paragraphs']}"
        )

    print(ocr)


def ocr_seconds_per_page(path: Path, scans: int) -> str:
    """ragwright's parser on image-only pages: render at 300 dpi, then Tesseract."""
    from ragwright.parsers.pdf import PdfParser

    try:
        parser = PdfParser(ocr="tesseract")
    except Exception as error:
        return f"OCR: not measured ({error})"
    text = " ".join(page.paragraphs[0] for page in build_text_pdf(path, pages=scans))
    build_scanned_pdf(path, text, scans=scans)
    start = time.perf_counter()
    document = parser.parse(path.read_bytes(), path.name)
    seconds = (time.perf_counter() - start) / scans
    engine = document.metadata["ocr_engine"]
    share = recall(WORD.findall(text) * scans, document.content)
    return f"OCR ({engine}, 300 dpi): {seconds:.2f} s/page, recall {share:.3f} ({scans} pages)"


if __name__ == "__main__":
    main()
