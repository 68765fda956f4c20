"""Peak memory of the ingesting (main) process on one huge single-line text file.

    .venv/bin/python benchmarks/ingest_memory.py [--sizes 10 50 200] [--embedder hashing]

For each size in MB it writes a text file of that size with no line break (sentences of
words), then ingests it in a fresh Python process and prints that process's peak resident
memory (``ru_maxrss``; the parse worker is another process, under its own limit), its resident
memory just before the ingest, and both as multiples of the file size. The target: the growth
during ingest under 4x the file size.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

MB = 1024 * 1024
WORDS = "the index keeps every chunk of text with its vector and offsets in one database".split()


def write_single_line(path: Path, size: int) -> None:
    pick = random.Random(0).choice
    with path.open("w", encoding="utf-8") as out:
        written = 0
        while written < size:
            sentence = " ".join(pick(WORDS) for _ in range(14)).capitalize() + ". "
            written += out.write(sentence)


def resident_bytes() -> int:
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def child(path: Path, embedder: str) -> None:
    """Ingest ``path`` in this process; print what memory it took as JSON."""
    from ragwright import Index, IngestOptions

    options = IngestOptions(max_file_size=path.stat().st_size + 1)
    with Index(path.parent / "index", embedder=embedder) as kb:
        kb.embedder.embed_documents(["warm up"])
        before = resident_bytes()
        report = kb.ingest([path], options=options)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    failed = [f.reason for f in report.failed]
    print(
        json.dumps(
            {"before": before, "peak": peak, "chunks": report.chunks_written, "failed": failed}
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.embedder)
        return
    print(f"{'file':>7} {'chunks':>8} {'before':>9} {'peak':>9} {'growth':>9}  growth/file")
    for size_mb in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "one-line.txt"
            write_single_line(path, size_mb * MB)
            command = [sys.executable, __file__, "--child", str(path), "--embedder", args.embedder]
            result = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
        size = size_mb * MB
        growth = result["peak"] - result["before"]
        print(
            f"{size_mb:>5}MB {result['chunks']:>8} {result['before'] / MB:>7.0f}MB "
            f"{result['peak'] / MB:>7.0f}MB {growth / MB:>7.0f}MB  {growth / size:>8.1f}x"
            + (f"  FAILED: {result['failed']}" if result["failed"] else "")
        )


if __name__ == "__main__":
    main()
