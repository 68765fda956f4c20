"""Open and first queries of an existing SQLite index, for comparing two versions of the code
on the same file (each in a fresh process):

    git archive a0ad7d4 src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/open_first_queries.py DIR old
    .venv/bin/python benchmarks/open_first_queries.py DIR new

"old" is the code before derived cache files (its keyword cache is built by the first query
with ``keyword_cache_after=1``); "new" deletes the derived files first, builds the keyword
cache in the query (``background=False``), then closes, reopens and queries both arms again.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragwright.stores.sqlite import SQLiteStore

QUERY = "kalo mine tura"


def rss_gb() -> float:
    with open("/proc/self/status") as status:
        line = next(row for row in status if row.startswith("VmRSS"))
    return int(line.split()[1]) / 2**20


def main() -> None:
    directory, version = Path(sys.argv[1]), sys.argv[2]
    options: dict[str, Any] = {"background": False} if version == "new" else {}
    if version == "new":
        for suffix in (".bm25", ".vectors"):
            (directory / ("index.sqlite3" + suffix)).unlink(missing_ok=True)
    else:
        options["keyword_cache_after"] = 1
    vector = np.random.default_rng(0).normal(size=384).astype(np.float32)
    started = time.perf_counter()
    store = SQLiteStore(directory, create=False, **options)
    store.vector_search(vector, 10)
    opened = time.perf_counter() - started
    started = time.perf_counter()
    store.keyword_search(QUERY, 10)
    keyword = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{version}: open + first vector {opened:.2f} s, first bm25 {keyword:.2f} s")
    print(f"   RSS {rss_gb():.2f} GB, peak {peak:.2f} GB")
    started = time.perf_counter()
    store.close()
    store = SQLiteStore(directory, create=False, **options)
    store.vector_search(vector, 10)
    store.keyword_search(QUERY, 10)
    print(f"   reopen + first vector + first bm25: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
