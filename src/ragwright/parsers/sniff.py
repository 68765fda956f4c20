"""What a file's bytes say it is, when they contradict its extension.

A ``.docx`` saved as ``.pdf`` is still a Word document: ``sniff`` names the extension its bytes
belong to, so the registry can hand it to the right parser; ``describe`` says in words what a
file starts like, for the error when no parser fits (never a Python bytes repr).
"""

from __future__ import annotations

import io
import zipfile

#: OOXML packages by the folder their main part lives in.
_OOXML_FOLDERS = (("word/", ".docx"), ("xl/", ".xlsx"), ("ppt/", ".pptx"))
#: How far into a file the PDF header may start (as the PDF parser allows).
_PDF_WITHIN = 1024


def sniff(data: bytes) -> str | None:
    """The extension (".pdf", ".docx", ".xlsx", ".pptx", ".rtf") the bytes belong to, or None.
    Office files are told apart by their zip entries, so ``data`` must be the whole file."""
    if data.find(b"%PDF-", 0, _PDF_WITHIN + 5) >= 0:
        return ".pdf"
    if data.startswith(b"{\\rtf"):
        return ".rtf"
    if data.startswith(b"PK\x03\x04"):
        return _ooxml_kind(data)
    return None


def _ooxml_kind(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()  # the central directory only: nothing is inflated
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    for folder, extension in _OOXML_FOLDERS:
        if any(name.startswith(folder) for name in names):
            return extension
    return None


def describe(head: bytes) -> str:
    """What a file starts like, in words: "a ZIP archive (Word, Excel or PowerPoint files are
    ZIP archives)", "HTML", "text starting 'Hello'", or "binary data"."""
    if head.startswith(b"%PDF-"):
        return "a PDF document"
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive (Word, Excel and PowerPoint files are ZIP archives)"
    if head.startswith(b"{\\rtf"):
        return "an RTF document"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return "a legacy Office file (.doc, .xls or .ppt)"
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8")):
        return "an image"
    text = head.decode("utf-8", errors="replace")
    if "\ufffd" in text[:-3] or any(ch < " " and ch not in "\t\r\n" for ch in text):
        return "binary data"
    lowered = text.lstrip().lower()
    if lowered.startswith(("<!doctype html", "<html")):
        return "HTML"
    words = " ".join(text.split())[:24]
    return f"text starting {words!r}" if words else "blank text"
