"""PDF files built at test time: text pages with an outline (reportlab), tables, scanned pages
(an image rendered by Pillow with its bundled TrueType font, placed on a page), encrypted PDFs.

Reused by benchmarks (parse throughput), so the builders take a size and return what they wrote.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader, simpleSplit
from reportlab.pdfgen import canvas
from reportlab.platypus import Flowable

_VOCABULARY = (
    "archive battery cactus harbour meadow lantern orbit pepper quartz river saddle timber "
    "velvet walnut yonder zephyr anchor beacon copper dolphin ember falcon glacier hazel "
    "indigo juniper kettle lemon marble nectar oyster pebble quiver raven silver thistle"
).split()
_WIDTH, _HEIGHT = A4
_MARGIN = 72.0
_BODY_SIZE = 11.0
_LEADING = 14.0


@dataclass(frozen=True)
class TextPage:
    """What one generated text page says: a chapter heading, a section heading halfway down,
    and paragraphs before and after it."""

    number: int
    chapter: str
    section: str
    paragraphs: tuple[str, ...]

    @property
    def words(self) -> list[str]:
        return " ".join(self.paragraphs).split()


def sentence_words(rng: random.Random, count: int) -> str:
    words = [rng.choice(_VOCABULARY) for _ in range(count)]
    return " ".join(words).capitalize() + "."


def page_plan(pages: int, paragraphs: int = 4, seed: int = 0) -> list[TextPage]:
    rng = random.Random(seed)
    plan = []
    for number in range(1, pages + 1):
        texts = tuple(
            f"Page {number} paragraph {index + 1}. "
            + " ".join(sentence_words(rng, rng.randint(8, 14)) for _ in range(4))
            for index in range(paragraphs)
        )
        plan.append(TextPage(number, f"Chapter {number}", f"Section {number}.1", texts))
    return plan


def build_text_pdf(
    path: Path,
    pages: int = 3,
    *,
    paragraphs: int = 4,
    outline: bool = True,
    title: str = "Generated report",
    author: str = "Ragwright Tests",
    seed: int = 0,
) -> list[TextPage]:
    """A text PDF of ``pages`` pages (each: chapter heading, paragraphs, section heading,
    paragraphs), with an outline (chapter → section) unless ``outline=False``."""
    plan = page_plan(pages, paragraphs, seed)
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle(title)
    pdf.setAuthor(author)
    for page in plan:
        _draw_text_page(pdf, page, outline)
        pdf.showPage()
    pdf.save()
    return plan


def _draw_text_page(pdf: canvas.Canvas, page: TextPage, outline: bool) -> None:
    y = _HEIGHT - _MARGIN
    half = len(page.paragraphs) // 2
    y = _heading(pdf, page.chapter, 18, y, f"c{page.number}", 0 if outline else None)
    for index, paragraph in enumerate(page.paragraphs):
        if index == half:
            y = _heading(pdf, page.section, 14, y, f"s{page.number}", 1 if outline else None)
        y = _paragraph(pdf, paragraph, y)


def _heading(
    pdf: canvas.Canvas, text: str, size: float, y: float, key: str, level: int | None
) -> float:
    pdf.setFont("Helvetica-Bold", size)
    pdf.drawString(_MARGIN, y, text)
    if level is not None:
        pdf.bookmarkHorizontal(key, 0, y + size)
        pdf.addOutlineEntry(text, key, level)
    return y - 2 * size


def _paragraph(pdf: canvas.Canvas, text: str, y: float) -> float:
    pdf.setFont("Helvetica", _BODY_SIZE)
    for line in simpleSplit(text, "Helvetica", _BODY_SIZE, _WIDTH - 2 * _MARGIN):
        pdf.drawString(_MARGIN, y, line)
        y -= _LEADING
    return y - _LEADING  # a blank line between paragraphs


def scan_image(text: str, *, dpi: int = 200, font_px: int = 40) -> Image.Image:
    """A white A4 page at ``dpi`` with ``text`` written on it in black, wrapped: a "scan"."""
    width, height = round(_WIDTH / 72 * dpi), round(_HEIGHT / 72 * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_px)  # Pillow's bundled TrueType font
    margin = dpi  # one inch
    x, y, line = margin, margin, ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if draw.textlength(candidate, font=font) > width - 2 * margin and line:
            draw.text((x, y), line, fill=0, font=font)
            y, line = y + round(font_px * 1.5), word
        else:
            line = candidate
    if line:
        draw.text((x, y), line, fill=0, font=font)
    return image


def build_scanned_pdf(path: Path, text: str, *, text_pages: int = 0, scans: int = 1) -> None:
    """``text_pages`` ordinary text pages followed by ``scans`` image-only pages showing
    ``text``: pages with no text layer at all, as a scanner makes them."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle("Scanned")
    for page in page_plan(text_pages):
        _draw_text_page(pdf, page, outline=False)
        pdf.showPage()
    image = ImageReader(scan_image(text))
    for _ in range(scans):
        pdf.drawImage(image, 0, 0, width=_WIDTH, height=_HEIGHT)
        pdf.showPage()
    pdf.save()


def build_encrypted_pdf(
    path: Path, pages: int = 1, *, user_password: str = "secret", owner_password: str = "owner"
) -> list[TextPage]:
    """A text PDF encrypted with a user password (``""``: anyone may open it)."""
    from reportlab.lib.pdfencrypt import StandardEncryption

    plan = page_plan(pages)
    encryption = StandardEncryption(user_password, owner_password, strength=128)
    pdf = canvas.Canvas(str(path), pagesize=A4, encrypt=encryption)
    for page in plan:
        _draw_text_page(pdf, page, outline=False)
        pdf.showPage()
    pdf.save()
    return plan


def build_table_pdf(
    path: Path,
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    ruled: bool = True,
    framed_text: str = "",
    note_beside: str = "",
) -> None:
    """A heading, a paragraph, a table (``ruled``: a grid drawn around every cell; else columns
    aligned by whitespace alone), and a closing paragraph, laid out by reportlab's platypus; a
    table longer than a page continues on the next with its header row repeated. With
    ``framed_text``, a last page holding that paragraph inside a drawn box (no table). With
    ``note_beside``, a short paragraph set to the table's right, on the lines of its rows."""
    from reportlab.lib import colors
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    styles = getSampleStyleSheet()
    data = [list(header)] + [[str(cell) for cell in row] for row in rows]
    table = Table(data, repeatRows=1, hAlign="LEFT")
    if ruled:
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    body: list[Flowable] = [table]
    if note_beside:
        note = Table([[Paragraph(note_beside, styles["Normal"])]], colWidths=[120])
        body = [Table([[table, note]], hAlign="LEFT", style=[("VALIGN", (0, 0), (-1, -1), "TOP")])]
    story: list[Flowable] = [
        Paragraph("Sales", styles["Heading1"]),
        Paragraph("The table lists every sale of the quarter.", styles["Normal"]),
        *body,
        Paragraph("That is all.", styles["Normal"]),
    ]
    if framed_text:
        frame = Table([[Paragraph(framed_text, styles["Normal"])]], colWidths=[400])
        frame.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 1, colors.black)]))
        story += [PageBreak(), frame]
    SimpleDocTemplate(str(path), pagesize=A4).build(story)
