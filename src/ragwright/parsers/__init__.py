"""Parsers: bytes of one file in, normalized text with sections out.

The parser classes load lazily (``from ragwright.parsers import HtmlParser`` imports selectolax
then, not before), so ``import ragwright`` and the registry pull in no parsing library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragwright._lazy import lazy_names
from ragwright.parsers.registry import ParserRegistry

if TYPE_CHECKING:
    from ragwright.parsers.html import HtmlParser
    from ragwright.parsers.markdown import MarkdownParser
    from ragwright.parsers.pdf import PdfParser
    from ragwright.parsers.text import TextParser

__all__ = ["HtmlParser", "MarkdownParser", "ParserRegistry", "PdfParser", "TextParser"]

_LAZY = {
    "HtmlParser": "ragwright.parsers.html",
    "MarkdownParser": "ragwright.parsers.markdown",
    "PdfParser": "ragwright.parsers.pdf",
    "TextParser": "ragwright.parsers.text",
}


__getattr__ = lazy_names(__name__, _LAZY)
