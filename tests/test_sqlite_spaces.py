"""The SQLite store keeps the `SpaceRebuild` contract (``ragwright reindex``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.space_contract import SPACE, SpaceRebuildContract


class TestSQLiteSpaces(SpaceRebuildContract):
    @pytest.fixture
    def open_again(self, tmp_path: Path) -> Callable[[], SQLiteStore]:
        return functools.partial(SQLiteStore, tmp_path / "index")

    @pytest.fixture
    def store(self, open_again: Callable[[], SQLiteStore]) -> Iterator[SQLiteStore]:
        with open_again() as opened:
            opened.bind_space(SPACE)
            yield opened
