"""The graph conformance suite on the SQLite store, and what only SQLite has: its tables."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.fact_vector_contract import FactVectorContract
from ragwright.testing.graph_contract import GraphContract


class TestSQLiteGraph(GraphContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index")


class TestSQLiteFactVectors(FactVectorContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index")
