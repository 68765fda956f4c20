"""Sync checkpoints on both stores: the shared `ragwright.testing.checkpoint_contract`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.checkpoint_contract import CheckpointContract


class TestSQLiteCheckpoints(CheckpointContract):
    @pytest.fixture
    def checkpoints(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        store = SQLiteStore(tmp_path / "kb")
        yield store
        store.close()

    @pytest.fixture
    def reopen(self, tmp_path: Path, checkpoints: SQLiteStore) -> Iterator[Callable[[], Any]]:
        opened: list[SQLiteStore] = []

        def again() -> SQLiteStore:
            opened.append(SQLiteStore(tmp_path / "kb"))
            return opened[-1]

        yield again
        for store in opened:
            store.close()


class TestPostgresCheckpoints(CheckpointContract):
    @pytest.fixture
    def backend(self, pg_url: str) -> Iterator[PostgresBackend]:
        with PostgresBackend(pg_url) as backend:
            yield backend

    @pytest.fixture
    def checkpoints(self, backend: PostgresBackend) -> Any:
        return backend.open("default", create=True)

    @pytest.fixture
    def reopen(self, pg_url: str, checkpoints: Any) -> Iterator[Callable[[], Any]]:
        opened: list[PostgresBackend] = []

        def again() -> Any:
            opened.append(PostgresBackend(pg_url))
            return opened[-1].open("default", create=False)

        yield again
        for backend in opened:
            backend.close()
