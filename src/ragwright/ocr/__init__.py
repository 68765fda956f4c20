"""OCR engines: read the text in images of pages (scans). One adapter per module.

The `OcrEngine` port is in `ragwright.ports`; the PDF parser uses an engine for pages that have
no text layer. `TesseractOcr` runs the ``tesseract`` command-line program.
"""

from __future__ import annotations

from ragwright.ocr.tesseract import TesseractOcr

__all__ = ["TesseractOcr"]
