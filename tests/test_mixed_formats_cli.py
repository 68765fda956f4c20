"""Issue 4's acceptance run through the CLI: one folder mixing every format, with a corrupt
file, an encrypted PDF, a scanned page and a zip bomb. Everything ingestible goes in, the bad
files are reported with reasons, the scanned page is searchable, and every chunk of a table
carries its header."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from office_files import (
    SALES_HEADER,
    build_csv,
    build_docx,
    build_jsonl,
    build_pptx,
    build_rtf,
    build_xlsx,
    build_zip_bomb,
    sales_rows,
)
from pdf_files import build_encrypted_pdf, build_scanned_pdf, build_table_pdf, build_text_pdf
from ragwright import Index
from ragwright.cli import app

SCANNED = "Quarterly invoices list the outstanding balance and payment terms."

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed"),
]


def run(*args: str) -> tuple[int, dict[str, object] | list[object]]:
    result = CliRunner().invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_a_folder_of_every_format_ingests_reports_and_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_OCR", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("Plain notes about the harbour ferry timetable.\n")
    (docs / "guide.md").write_text("# Guide\n\n## Ferries\n\nThe ferry leaves at nine.\n")
    (docs / "page.html").write_text("<h1>Harbour</h1><p>The harbour opens at dawn.</p>")
    build_text_pdf(docs / "report.pdf", pages=2)
    build_table_pdf(docs / "prices.pdf", SALES_HEADER, sales_rows(60))  # a ruled table, 2 pages
    build_scanned_pdf(docs / "scan.pdf", SCANNED)
    build_encrypted_pdf(docs / "locked.pdf")
    build_docx(docs / "manual.docx")
    build_pptx(docs / "deck.pptx")
    build_xlsx(docs / "sales.xlsx", rows=400)
    build_csv(docs / "sales.csv", rows=400)
    build_jsonl(docs / "records.jsonl")
    build_rtf(docs / "menu.rtf")
    whole = build_docx(tmp_path / "whole.docx").read_bytes()
    (docs / "corrupt.docx").write_bytes(whole[: len(whole) // 2])
    build_zip_bomb(docs / "bomb.docx", inflated_mb=300)

    code, report = run("ingest", "docs", "--embedder", "hashing", "--chunk-size", "400")
    assert code == 1  # something failed, and the rest went in
    assert isinstance(report, dict)
    added = {Path(source).name for source in report["added"]}  # type: ignore[union-attr]
    failed = {Path(f["source"]).name: f["reason"] for f in report["failed"]}  # type: ignore[index,union-attr]
    assert added == {
        "notes.txt", "guide.md", "page.html", "report.pdf", "prices.pdf", "scan.pdf", "manual.docx",
        "deck.pptx", "sales.xlsx", "sales.csv", "records.jsonl", "menu.rtf",
    }  # fmt: skip
    assert set(failed) == {"locked.pdf", "corrupt.docx", "bomb.docx"}
    assert "encrypted" in failed["locked.pdf"]
    assert "corrupt zip archive" in failed["corrupt.docx"]
    assert "max_" in failed["bomb.docx"]  # the archive limit that refused it is named

    code, hits = run("search", "outstanding balance payment terms", "--mode", "bm25")
    assert code == 0 and isinstance(hits, dict)
    top = hits["hits"][0]  # type: ignore[index]
    assert top["source"] == "docs/scan.pdf" and "outstanding balance" in top["text"].lower()

    header = "| " + " | ".join(SALES_HEADER) + " |"
    with Index(tmp_path / ".ragwright") as kb:
        for name in ("sales.xlsx", "sales.csv", "prices.pdf"):
            document = kb.documents.get(f"docs/{name}")
            assert document is not None
            chunks = kb.documents.chunks_of(document.id)
            assert len(chunks) > 3  # the table really was split
            for chunk in chunks:
                assert document.content[chunk.char_start : chunk.char_end] == chunk.text
                if "| " in chunk.text:  # a chunk with rows (in the PDF, prose comes too)
                    assert header in chunk.indexed_text  # its own text, or the carried header
