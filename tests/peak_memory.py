"""Ingesting a file in a fresh interpreter, to read the run's peak memory (issue 31, item 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

MB = 1024 * 1024
#: What ingesting any file may take beside the interpreter, the libraries and the parse worker
#: (the baseline, measured on a one-cell file) and 4x the file: a document's working set.
ALLOWANCE = 32 * MB

_CHILD = """
import json, resource, sys
# A regression to quadratic growth fails here, not by exhausting the machine's memory.
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
from ragwright import Index
from ragwright.testing import HashingEmbedder
with Index(sys.argv[2], embedder=HashingEmbedder()) as kb:
    report = kb.ingest(sys.argv[1])
usage = resource.getrusage
print(json.dumps({
    "added": report.added,
    "failed": {f.source: f.reason for f in report.failed},
    "peak": max(usage(resource.RUSAGE_SELF).ru_maxrss, usage(resource.RUSAGE_CHILDREN).ru_maxrss)
    * 1024,
}))
"""


def ingest_in_child(path: Path, index: Path) -> dict[str, Any]:
    """Ingest ``path`` (a file or folder) in a fresh interpreter; what it reports (``added``,
    ``failed`` reasons by source), with its peak memory (RSS, the parse worker's included) in
    bytes as ``peak``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(index)],
        capture_output=True,
        text=True,
        # Few malloc arenas: each thread's would reserve 64 MB of address space.
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MALLOC_ARENA_MAX": "2"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def baseline_peak(folder: Path) -> int:
    """The peak memory of ingesting a one-cell CSV: the interpreter, the libraries, the parse
    worker."""
    small = folder / "baseline.csv"
    small.write_text("a\n1\n")
    peak: int = ingest_in_child(small, folder / "baseline-index")["peak"]
    return peak
