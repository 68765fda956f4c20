"""The community conformance suite on both stores (PostgreSQL: a real server, pg_server.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.stores.postgres import connect
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.community_contract import CommunityContract


class TestSQLiteCommunities(CommunityContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index")


class TestPostgresCommunities(CommunityContract):
    @pytest.fixture
    def open_store(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)
