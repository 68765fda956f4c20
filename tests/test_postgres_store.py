"""The PostgreSQL store: the store contract, plus what only PostgreSQL has (HNSW against
exact search, BM25 against the SQLite store, collections, LLM records, lost connections and a
server killed during an ingest)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from ragwright.stores.postgres import connect
from ragwright.testing.store_contract import StoreContract


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def open_store(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)
