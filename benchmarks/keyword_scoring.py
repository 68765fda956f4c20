"""BM25 cache scoring against another version's `keyword_matrix` on SciFact test (no
embedding): same top-10, and p50 of ``top_k`` alone, interleaved in one process.

    git archive a0ad7d4 src | tar -x -C /tmp/old
    .venv/bin/python benchmarks/keyword_scoring.py \
        /tmp/old/src/ragwright/stores/sqlite/keyword_matrix.py

The other module is loaded from its file (it must have ``KeywordMatrix.load(connection)`` and
``top_k(terms, k)``, as a0ad7d4's does). ``--rounds`` repeats the 300 queries.
"""

from __future__ import annotations

import argparse
import importlib.util
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _scifact_index import DATASET
from bm25_ablation import build
from ragwright.evaluation.metrics import load_beir
from ragwright.stores.fts_query import STOP_WORDS, query_terms
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite import fts5_postings
from ragwright.stores.sqlite.schema import FTS_TOKENIZER


def other_module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("other_keyword_matrix", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("other", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = load_beir(DATASET, "test")
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), FTS_TOKENIZER, True).close()
        db = sqlite3.connect(Path(tmp) / "index.sqlite3")
        db.execute("BEGIN")
        matrices = {"other": other_module(args.other).KeywordMatrix.load(db)}
        matrices["this"] = fts5_postings.load(db)
        tokenizer = FTS5Terms(FTS_TOKENIZER)
        queries = [
            tokenizer.terms(" ".join(query_terms(text, STOP_WORDS)))
            for text in data.queries.values()
        ]
        times: dict[str, list[float]] = {name: [] for name in matrices}
        same = 0
        for _ in range(args.rounds):
            for terms in queries:
                found = {}
                for name, matrix in matrices.items():
                    started = time.perf_counter()
                    found[name] = [rowid for rowid, _ in matrix.top_k(terms, 10)]
                    times[name].append((time.perf_counter() - started) * 1000)
                same += found["this"] == found["other"]
        print(f"same top-10: {same} of {args.rounds * len(queries)}")
        for name, values in times.items():
            print(f"{name:<6} top_k p50 {statistics.median(values):.3f} ms")


if __name__ == "__main__":
    main()
