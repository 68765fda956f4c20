"""Document permissions on both stores: the shared `ragwright.testing.permission_contract`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.permission_contract import SPACE, PermissionContract


class TestSQLitePermissions(PermissionContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        with SQLiteStore(tmp_path / "kb") as opened:
            opened.bind_space(SPACE)
            yield opened


class TestPostgresPermissions(PermissionContract):
    @pytest.fixture
    def store(self, pg_url: str) -> Iterator[Any]:
        with PostgresBackend(pg_url) as backend:
            store = backend.open("default", create=True)
            store.bind_space(SPACE)
            yield store
