"""The graph conformance suite on the SQLite store, and what only SQLite has: its tables."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragwright.models.graph import TypedFact
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.fact_vector_contract import FactVectorContract
from ragwright.testing.graph_contract import GraphContract, load_graph
from ragwright.testing.store_contract import SPACE


class TestSQLiteGraph(GraphContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index")


class TestSQLiteFactVectors(FactVectorContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Callable[[], Any]:
        return functools.partial(SQLiteStore, tmp_path / "index")


def test_a_graph_written_before_the_direction_is_read_as_it_was_then_upgraded(
    tmp_path: Path,
) -> None:
    """An index whose relations have no direction yet: a read-only open (which adds nothing)
    reads them in key order; a writer's open adds the column, and new facts keep theirs."""
    with SQLiteStore(tmp_path) as store:
        store.bind_space(SPACE)
        load_graph(store, {"one.md": ["Ada Lovelace wrote to Charles Babbage."]})
        before, database = store.typed_facts(), store.path
    with sqlite3.connect(database) as db:  # as the previous release left it
        db.execute("ALTER TABLE graph_relations DROP COLUMN reversed")
        db.execute("DELETE FROM meta WHERE key = 'feature_relation_direction'")
    with SQLiteStore(tmp_path, read_only=True) as store:
        assert store.typed_facts() == before
    with SQLiteStore(tmp_path, create=False) as store:
        assert store.typed_facts() == before
        load_graph(store, {"two.md": ["Zeno Smith met Abel Jones."]})
        assert store.typed_facts() == [*before, TypedFact("zeno smith", "co-occurs", "abel jones")]
