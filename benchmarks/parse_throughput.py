"""Parse throughput and peak memory per document format, on a generated corpus.

    .venv/bin/python benchmarks/parse_throughput.py [--scale 1] [--repeat 3] [--no-ocr]

Builds one file per format with the same builders the tests use (python-docx, python-pptx,
openpyxl, reportlab, Pillow), then parses each in a fresh child process with the parser the
registry picks for it, ``--repeat`` times, keeping the best time. A child per format makes its
peak resident memory its own. Baselines from the same run: plain text (the cheapest parser:
every ratio is "MB/s relative to .txt") and an idle child (interpreter, ragwright and its parser
plugins loaded, no parse: memory is reported above that floor). The scanned PDF goes through
Tesseract OCR.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

_WORDS = (
    "retrieval index chunk parser table header section page slide sheet record answer "
    "citation span source document vector keyword budget ledger cache engine query result"
).split()


def _sentences(rng: random.Random, count: int) -> str:
    return " ".join(
        " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."
        for _ in range(count)
    )


def _text(path: Path, scale: int) -> None:
    rng = random.Random(1)
    paragraphs = [_sentences(rng, 5) for _ in range(2000 * scale)]
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")


def _markdown(path: Path, scale: int) -> None:
    rng = random.Random(2)
    parts = []
    for number in range(200 * scale):
        parts.append(f"## Section {number}\n")
        parts.extend(_sentences(rng, 5) + "\n" for _ in range(10))
        parts.append("| Region | Units |\n| --- | --- |\n| North | 3 |\n| South | 5 |\n")
    path.write_text("\n".join(parts), encoding="utf-8")


def _html(path: Path, scale: int) -> None:
    rng = random.Random(3)
    body = []
    for number in range(200 * scale):
        body.append(f"<h2>Section {number}</h2>")
        body.extend(f"<p>{_sentences(rng, 5)}</p>" for _ in range(10))
        body.append(
            "<table><tr><th>Region</th><th>Units</th></tr><tr><td>North</td><td>3</td></tr></table>"
        )
    page = "<html><head><title>Bench</title></head><body><nav>menu</nav>{}</body></html>"
    path.write_text(page.format("".join(body)), encoding="utf-8")


def _builders(scale: int, ocr: bool) -> dict[str, tuple[str, Callable[[Path], object]]]:
    """Format name → (file name, builder writing that file)."""
    import office_files as office
    import pdf_files as pdfs

    builders: dict[str, tuple[str, Callable[[Path], object]]] = {
        "text": ("bench.txt", lambda p: _text(p, scale)),
        "markdown": ("bench.md", lambda p: _markdown(p, scale)),
        "html": ("bench.html", lambda p: _html(p, scale)),
        "csv": ("bench.csv", lambda p: office.build_csv(p, rows=20_000 * scale)),
        "xlsx": ("bench.xlsx", lambda p: office.build_xlsx(p, rows=20_000 * scale)),
        "docx": (
            "bench.docx",
            lambda p: office.build_docx(p, sections=100 * scale, paragraphs=10, table_rows=20),
        ),
        "pptx": ("bench.pptx", lambda p: office.build_pptx(p, slides=100 * scale, table_rows=5)),
        "jsonl": ("bench.jsonl", lambda p: office.build_jsonl(p, records=10_000 * scale)),
        "rtf": ("bench.rtf", lambda p: office.build_rtf(p, paragraphs=2000 * scale)),
        "pdf": ("bench.pdf", lambda p: pdfs.build_text_pdf(p, pages=100 * scale)),
        # ~40 rows a page, every page a ruled table: the cost of table detection (pdfplumber)
        "pdf tables": (
            "tables.pdf",
            lambda p: pdfs.build_table_pdf(
                p, office.SALES_HEADER, office.sales_rows(800 * scale), ruled=True
            ),
        ),
    }
    if ocr:
        text = "Scanned invoices list the total amount due and the payment terms."
        builders["pdf (OCR)"] = ("scanned.pdf", lambda p: pdfs.build_scanned_pdf(p, text, scans=2))
    return builders


def _child(path: str, repeat: int) -> None:
    """In the child: parse ``path`` ``repeat`` times; print seconds, units and peak RSS."""
    from ragwright.parsers.registry import ParserRegistry

    registry = ParserRegistry.from_entry_points()
    if path == "-":  # the idle baseline: the registry with its plugins loaded, no parse
        print(json.dumps({"rss_mb": _peak_rss_mb()}))
        return
    data = Path(path).read_bytes()
    parser = registry.parser_for(path, data)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        parsed = parser.parse(data, Path(path).name)
        best = min(best, time.perf_counter() - started)
    pages = {section.page for section in parsed.sections if section.page is not None}
    result = {
        "seconds": best,
        "bytes": len(data),
        "characters": len(parsed.content),
        "sections": len(parsed.sections),
        "pages": len(pages),
        "rss_mb": _peak_rss_mb(),
    }
    print(json.dumps(result))


def _peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM, not ``ru_maxrss``: the latter survives
    exec, so a child would report the peak of the parent it was forked from."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: kB, roughly


def _run_child(path: str, repeat: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", path, "--repeat", str(repeat)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1, help="Multiplies every file's size.")
    parser.add_argument("--repeat", type=int, default=3, help="Parses per format (best kept).")
    parser.add_argument("--no-ocr", action="store_true", help="Skip the scanned PDF.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.repeat)
        return
    ocr = not args.no_ocr and shutil.which("tesseract") is not None
    if not args.no_ocr and not ocr:
        print("tesseract not found: the scanned PDF is skipped (make system-deps installs it)")
    idle = _run_child("-", 1)["rss_mb"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (file_name, build) in _builders(args.scale, ocr).items():
            path = Path(tmp) / file_name
            build(path)
            repeat = 1 if "OCR" in name else args.repeat
            rows.append((name, _run_child(str(path), repeat)))
    text_speed = rows[0][1]["bytes"] / rows[0][1]["seconds"]
    print(f"idle child (interpreter + parser plugins): {idle:.0f} MB peak RSS; peak MB is above it")
    header = (
        f"{'format':<10} {'file MB':>8} {'MB/s':>8} {'vs txt':>7} {'chars/s':>11} "
        f"{'pages/s':>8} {'sections':>8} {'peak MB':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, row in rows:
        megabytes = row["bytes"] / 1e6
        speed = row["bytes"] / row["seconds"]
        pages = f"{row['pages'] / row['seconds']:8.1f}" if row["pages"] else f"{'':>8}"
        print(
            f"{name:<10} {megabytes:8.2f} {speed / 1e6:8.2f} {speed / text_speed:7.3f} "
            f"{row['characters'] / row['seconds']:11,.0f} {pages} {int(row['sections']):8d} "
            f"{row['rss_mb'] - idle:8.1f}"
        )


if __name__ == "__main__":
    main()
