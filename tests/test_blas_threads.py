"""The process that searches multiplies with one BLAS thread: the first vector search limits
numpy's BLAS, once (a product is memory-bound, and OpenBLAS's threads starve on a busy
machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SEARCH = """
import json, sys
from threadpoolctl import ThreadpoolController
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

blas = ThreadpoolController().select(user_api="blas").lib_controllers
for library in blas:
    library.set_num_threads(2)
store = SQLiteStore(sys.argv[1], background=False)
store.bind_space(SPACE)
document, chunks = make_document("a.md", ["green tea", "black tea"])
store.upsert(document, chunks, vectors_for("a.md", 2))
before = [library.num_threads for library in blas]
hits = store.vector_search(vectors_for("a.md", 2)[0], 2)
after = [library.num_threads for library in blas]
print(json.dumps({"before": before, "after": after, "hits": len(hits)}))
"""


def _search(tmp_path: Path, **environment: str) -> dict[str, list[int] | int]:
    chosen = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in chosen} | environment
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    found: dict[str, list[int] | int] = json.loads(done.stdout)
    return found


def test_the_first_vector_search_limits_the_process_s_blas_to_one_thread(tmp_path: Path) -> None:
    found = _search(tmp_path)
    count = len(found["before"])  # type: ignore[arg-type]
    assert count >= 1 and found["hits"] == 2
    assert (found["before"], found["after"]) == ([2] * count, [1] * count)


def test_threads_the_environment_names_are_left_as_chosen(tmp_path: Path) -> None:
    found = _search(tmp_path, OMP_NUM_THREADS="2")
    count = len(found["before"])  # type: ignore[arg-type]
    assert count >= 1 and found["hits"] == 2
    assert found["before"] == found["after"] == [2] * count
