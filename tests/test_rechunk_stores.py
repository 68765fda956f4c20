"""Both stores keep the `ChunkingRebuild` contract (``ragwright reindex --chunker``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.stores.postgres import connect
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.rechunk_contract import SPACE, ChunkingRebuildContract


class TestSQLiteRechunk(ChunkingRebuildContract):
    @pytest.fixture
    def open_again(self, tmp_path: Path) -> Callable[[], SQLiteStore]:
        return functools.partial(SQLiteStore, tmp_path / "index")

    @pytest.fixture
    def store(self, open_again: Callable[[], SQLiteStore]) -> Iterator[SQLiteStore]:
        with open_again() as opened:
            opened.bind_space(SPACE)
            yield opened


class TestPostgresRechunk(ChunkingRebuildContract):
    @pytest.fixture
    def open_again(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)

    @pytest.fixture
    def store(self, open_again: Callable[[], Any]) -> Iterator[Any]:
        opened = open_again()
        try:
            opened.bind_space(SPACE)
            yield opened
        finally:
            opened.close()
