"""Peak memory of ingesting one large file, against the same run on a tiny file of its kind.

    .venv/bin/python benchmarks/ingest_memory.py [--kinds text csv markdown] [--sizes 8 32]
        [--embedder hashing]

For each kind and size in MB it writes a file of that kind (``text``: one line of sentences,
no line break; ``csv``: a table of 12 columns; ``markdown``: sections of headings, paragraphs,
lists, tables and fenced code), then ingests it in a fresh Python process and prints the peak
resident memory of that process and of its parse worker (``ru_maxrss`` of each: the worker is
a child process, under its own limit), and the baseline: the same on a file of one line of
the kind. The ratio printed is (peak - baseline peak) / file size, for the main process and
the worker; the target is 4x or less (issue 31). Memory, not time: the numbers hold on a
loaded machine.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

MB = 1024 * 1024
WORDS = "the index keeps every chunk of text with its vector and offsets in one database".split()


def _sentence(pick: Callable[[list[str]], str], words: int = 14) -> str:
    return " ".join(pick(WORDS) for _ in range(words)).capitalize() + "."


def write_text(path: Path, size: int) -> None:
    pick = random.Random(0).choice
    with path.open("w", encoding="utf-8") as out:
        written = 0
        while written < size:
            written += out.write(_sentence(pick) + " ")


def write_csv(path: Path, size: int) -> None:
    pick = random.Random(0).choice
    with path.open("w", encoding="utf-8") as out:
        written = out.write(",".join(f"column {i}" for i in range(12)) + "\n")
        row = 0
        while written < size:
            cells = [str(row), *(pick(WORDS) for _ in range(10)), str(row * 7 % 1000)]
            written += out.write(",".join(cells) + "\n")
            row += 1


def write_markdown(path: Path, size: int) -> None:
    rng = random.Random(0)
    pick = rng.choice
    with path.open("w", encoding="utf-8") as out:
        written = out.write("---\ntitle: Large\n---\n\n# Large document\n\n")
        section = 0
        while written < size:
            section += 1
            parts = [f"## Section {section}\n", _sentence(pick) + " " + _sentence(pick) + "\n"]
            parts.append("".join(f"- {_sentence(pick, 6)}\n" for _ in range(3)))
            parts.append(f"### Details {section}\n\n" + " ".join(_sentence(pick) for _ in range(5)))
            if section % 5 == 0:
                rows = "".join(f"| {pick(WORDS)} | {rng.randint(0, 999)} |\n" for _ in range(8))
                parts.append(f"| word | count |\n| --- | --- |\n{rows}")
            if section % 7 == 0:
                parts.append(f"```python\nprint({section})\n# not a heading\n```\n")
            written += out.write("\n".join(parts) + "\n\n")


KINDS: dict[str, tuple[str, Callable[[Path, int], None]]] = {
    "text": ("one-line.txt", write_text),
    "csv": ("table.csv", write_csv),
    "markdown": ("document.md", write_markdown),
}


def child(path: Path, embedder: str) -> None:
    """Ingest ``path`` in this process; print what memory it and its worker took, as JSON."""
    from ragwright import Index, IngestOptions

    options = IngestOptions(max_file_size=path.stat().st_size + 1)
    with Index(path.parent / "index", embedder=embedder) as kb:
        report = kb.ingest([path], options=options)
    usage = resource.getrusage
    peak = usage(resource.RUSAGE_SELF).ru_maxrss * 1024
    worker = usage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    failed = [f.reason for f in report.failed]
    print(json.dumps({"peak": peak, "worker": worker, "chunks": report.chunks_written,
                      "failed": failed}))  # fmt: skip


def measure(kind: str, size: int, embedder: str) -> dict[str, Any]:
    name, write = KINDS[kind]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        write(path, size)
        command = [sys.executable, __file__, "--child", str(path), "--embedder", embedder]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kinds", nargs="+", choices=sorted(KINDS), default=sorted(KINDS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.embedder)
        return
    print(f"{'kind':>9} {'file':>6} {'chunks':>8} {'peak':>8} {'worker':>8}  main/file worker/file")
    for kind in args.kinds:
        base = measure(kind, 1, args.embedder)  # one line of the kind: the fixed cost
        for size_mb in args.sizes:
            size = size_mb * MB
            result = measure(kind, size, args.embedder)
            main_ratio = (result["peak"] - base["peak"]) / size
            worker_ratio = (result["worker"] - base["worker"]) / size
            print(
                f"{kind:>9} {size_mb:>4}MB {result['chunks']:>8} "
                f"{result['peak'] / MB:>6.0f}MB {result['worker'] / MB:>6.0f}MB"
                f"  {main_ratio:>8.2f}x {worker_ratio:>9.2f}x"
                + (f"  FAILED: {result['failed']}" if result["failed"] else "")
            )


if __name__ == "__main__":
    main()
