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


def test_links_made_by_an_earlier_linker_are_made_again_under_the_current_rules(
    tmp_path: Path,
) -> None:
    """An index linked by another linker version (here: a surname linked though it is only
    written in another document, as version 1 did) drops its links and links every entity
    afresh at the next linking; the user's unmerges still hold."""
    with SQLiteStore(tmp_path) as store:
        store.bind_space(SPACE)
        corpus = {"a.md": ["Joel Cohen directed films."], "b.md": ["Cohen sang songs."],
                  "c.md": ["IBM grew.", "I.B.M. grew."], "d.md": ["Ada Lovelace wrote."],
                  "e.md": ["Lovelace wrote."]}  # fmt: skip
        load_graph(store, corpus)
        assert store.link_synonyms() == 1  # ibm ~ i.b.m only: cohen and lovelace apart
        store.unmerge_entities("IBM", "I.B.M.")
        database = store.path
    with sqlite3.connect(database) as db:  # as version 1 left it
        db.execute("INSERT INTO graph_synonyms VALUES ('cohen', 'joel cohen', 0.9)")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'graph_linker'")
    with SQLiteStore(tmp_path, create=False) as store:
        assert store.graph_stats().synonym_links == 1
        assert store.link_synonyms() == 0
        assert store.graph_stats().synonym_links == 0  # cohen gone, ibm still unmerged
        assert store.link_synonyms() == 0  # linked once per version
