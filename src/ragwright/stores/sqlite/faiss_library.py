"""faiss (extra ``ann``), imported on first use: the HNSW graph (`ann_index`) and the 8-bit
scan of exact search (`int8_scan`) both run on it."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from ragwright.errors import MissingDependencyError

INSTALL = "pip install 'ragwright[ann]'"


def faiss_module() -> Any:
    """faiss, imported on first use; `MissingDependencyError` with the install line."""
    try:
        import faiss
    except ImportError as error:
        raise MissingDependencyError("approximate vector search", INSTALL) from error
    # A core is left to the queries while a graph is built. OpenMP threads spin while they
    # wait: on a machine with no idle core, two threads built a small graph 15x slower than one.
    faiss.omp_set_num_threads(max(1, (os.cpu_count() or 1) - 1))
    return faiss


def available() -> bool:
    try:
        faiss_module()
    except MissingDependencyError:
        return False
    return True


def installed() -> bool:
    """Whether faiss can be imported, without importing it (seconds on a loaded machine: a
    serving store imports it only to read a graph file or to build one in the background)."""
    try:
        return importlib.util.find_spec("faiss") is not None
    except (ImportError, ValueError):  # hidden (a None in sys.modules) or broken
        return False
