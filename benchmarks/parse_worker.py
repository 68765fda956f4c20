"""What does parsing in the limits worker cost? Per-file time in this process vs in the worker.

    python benchmarks/parse_worker.py [--files 300] [--pdf-pages 20]

Parses the same files three ways, one after another in this process: directly (no limits),
through `ParseWorker` (time and memory limits, one persistent child process), and the cost of
starting that worker. Small files show the fixed overhead per file (pickling the bytes and the
result over a pipe); a PDF shows it against real parsing work.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pdf_files import build_text_pdf
from ragwright.models import ParsedDocument
from ragwright.parsers import HtmlParser, MarkdownParser, TextParser
from ragwright.parsers.pdf import PdfParser
from ragwright.pipeline.ingest.parse_worker import ParseLimits, ParseWorker
from ragwright.ports import Parser

MARKDOWN = "# Title\n\n" + "\n\n".join(
    f"## Part {n}\n\nSome text about part {n}, with a [link](https://example.com)."
    for n in range(8)
)
HTML = (
    "<html><head><title>T</title></head><body><main>"
    + "".join(f"<h2>Part {n}</h2><p>Some text about part {n}.</p>" for n in range(8))
    + "</main></body></html>"
)


def per_file_ms(parse: Callable[[], ParsedDocument], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        parse()
    return (time.perf_counter() - start) * 1000 / count


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--files", type=int, default=300)
    options.add_argument("--pdf-pages", type=int, default=20)
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        pdf = Path(folder) / "doc.pdf"
        build_text_pdf(pdf, pages=args.pdf_pages)
        cases: list[tuple[str, Parser, bytes, int]] = [
            ("text (1 KB)", TextParser(), b"plain words " * 85, args.files),
            ("markdown (0.5 KB)", MarkdownParser(), MARKDOWN.encode(), args.files),
            ("html (0.4 KB)", HtmlParser(), HTML.encode(), args.files),
            (f"pdf ({args.pdf_pages} pages)", PdfParser(ocr="off"), pdf.read_bytes(), 20),
        ]
        worker = ParseWorker(ParseLimits(timeout=60, memory_mb=2048))
        start = time.perf_counter()
        worker.parse(TextParser(), b"warm up", "start.txt")
        started = (time.perf_counter() - start) * 1000
        print(f"worker start (first file): {started:.0f} ms, once per ingest run")
        print(f"{'file':<20} {'in process':>11} {'in worker':>10} {'overhead':>9} {'ratio':>6}")
        try:
            for name, parser, data, count in cases:
                worker.parse(parser, data, "warm")  # the parser travels once per worker
                here = per_file_ms(lambda p=parser, d=data: p.parse(d, "x"), count)
                there = per_file_ms(lambda p=parser, d=data: worker.parse(p, d, "x"), count)
                print(
                    f"{name:<20} {here:>8.3f} ms {there:>7.3f} ms {there - here:>6.3f} ms "
                    f"{there / here:>5.1f}x"
                )
        finally:
            worker.close()


if __name__ == "__main__":
    main()
