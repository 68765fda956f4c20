"""Sync checkpoints on both stores: the shared `ragwright.testing.checkpoint_contract`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragwright import Index
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from ragwright.testing.checkpoint_contract import CheckpointContract
from sync_helpers import Scripted


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


def test_a_source_syncs_into_a_postgresql_index_and_a_complete_listing_prunes(
    pg_url: str,
) -> None:
    source = Scripted()
    source.items = {"a": "Alpha fjord.", "b": "Beta kelp."}
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert sorted(kb.sync_source("m", source).added) == ["mem:a", "mem:b"]
        del source.items["b"]
        source.items["a"] = "Alpha fjord, edited."
        report = kb.sync_source("m", source)
        assert (report.updated, report.removed) == (["mem:a"], ["mem:b"])
        assert sorted(kb.sync_checkpoint("m").items) == ["a"]
        assert kb.sources.forget("m", purge=True) == 1
        assert kb.documents.list() == []
