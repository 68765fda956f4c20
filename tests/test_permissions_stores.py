"""Document permissions on both stores: the shared `ragwright.testing.permission_contract`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright.filters import Readable
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.permission_contract import DOCUMENTS, SPACE, PermissionContract, fill


class TestSQLitePermissions(PermissionContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        with SQLiteStore(tmp_path / "kb") as opened:
            opened.bind_space(SPACE)
            yield opened


class TestSQLiteWithoutKeywordCache(PermissionContract):
    """BM25 from FTS5 (its postings read per query for a restricted caller)."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        with SQLiteStore(tmp_path / "kb", keyword_cache=False) as opened:
            opened.bind_space(SPACE)
            yield opened


class TestSQLiteCachesBuiltInTheQuery(PermissionContract):
    """BM25 from the keyword cache, always (never FTS5 while it is built)."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        with SQLiteStore(tmp_path / "kb", background=False) as opened:
            opened.bind_space(SPACE)
            yield opened


class TestPostgresPermissions(PermissionContract):
    @pytest.fixture
    def store(self, pg_url: str) -> Iterator[Any]:
        with PostgresBackend(pg_url) as backend:
            store = backend.open("default", create=True)
            store.bind_space(SPACE)
            yield store


def test_a_read_only_open_of_an_index_from_before_permissions_reads_all_as_everyones(
    tmp_path: Path,
) -> None:
    with SQLiteStore(tmp_path / "kb") as store:
        store.bind_space(SPACE)
        fill(store)
    with sqlite3.connect(tmp_path / "kb" / "index.sqlite3") as db:  # as an older ragwright left it
        db.execute("DROP TABLE document_readers")
        db.execute("DELETE FROM meta WHERE key = 'feature_permissions'")
    with SQLiteStore(tmp_path / "kb", read_only=True) as store:
        listed = store.list_documents(Readable(("group:nobody",)))
        assert sorted(d.source for d in listed) == sorted(DOCUMENTS)
