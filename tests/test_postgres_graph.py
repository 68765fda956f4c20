"""The graph conformance suite on the PostgreSQL store (a real server, see pg_server.py), and
the two stores' snapshots of the same facts compared."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragwright.stores.postgres import connect
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.fact_vector_contract import FactVectorContract
from ragwright.testing.graph_contract import GRAPH_CORPUS, GraphContract, load_graph
from ragwright.testing.store_contract import SPACE, make_document


class TestPostgresGraph(GraphContract):
    @pytest.fixture
    def open_store(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)


class TestPostgresFactVectors(FactVectorContract):
    @pytest.fixture
    def open_store(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)


def test_both_stores_build_the_same_snapshot(pg_url: str, tmp_path: Path) -> None:
    snapshots = []
    for store in (connect(pg_url), SQLiteStore(tmp_path / "index")):
        store.bind_space(SPACE)
        load_graph(store)
        store.link_synonyms()
        store.merge_entities("Obama", "Barack Obama")
        snapshots.append(store.graph_snapshot())
        store.close()
    postgres, sqlite = snapshots
    assert postgres.entity_keys == sqlite.entity_keys
    assert postgres.entity_names == sqlite.entity_names
    assert postgres.chunk_ids == sqlite.chunk_ids
    for field in ("mention_entity", "mention_chunk", "mention_count", "edge_source",
                  "edge_target", "edge_weight", "synonym_source", "synonym_target",
                  "synonym_weight"):  # fmt: skip
        assert np.array_equal(getattr(postgres, field), getattr(sqlite, field)), field


def test_a_collection_made_before_moves_followed_the_graph_is_upgraded(pg_url: str) -> None:
    store = connect(pg_url, "premoves")
    store.bind_space(SPACE)
    load_graph(store)
    db = store._db

    def as_before(conn: Any) -> None:  # the evidence's foreign keys as first made, no trigger
        for table in ("graph_extractions", "graph_mentions", "graph_relations"):
            conn.execute(db.sql(
                f"ALTER TABLE {{s}}.{table} DROP CONSTRAINT {table}_chunk_id_fkey, ADD "
                f"CONSTRAINT {table}_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES "
                "{s}.chunks(id) ON DELETE CASCADE"
            ))  # fmt: skip
        conn.execute(db.sql("DROP FUNCTION {s}.graph_changes_moved() CASCADE"))

    db.run(as_before, "making an old collection")
    store.close()
    reopened = connect(pg_url, "premoves")
    try:
        before = reopened.graph_snapshot()
        texts = GRAPH_CORPUS["obama.md"]
        moved, chunks = make_document("renamed.md", texts)
        assert reopened.move_document(make_document("obama.md", texts)[0].id, moved, chunks)
        after = reopened.graph_snapshot()
        assert after.change is not None and after.change.base == before.version  # replayed
        assert {c.id for c in chunks} <= set(after.chunk_ids)
        assert float(after.mention_count.sum()) == float(before.mention_count.sum())
    finally:
        reopened.close()


def test_links_made_by_an_earlier_linker_are_made_again_under_the_current_rules(
    pg_url: str,
) -> None:
    """As on SQLite (test_graph_store.py): links of another linker version are dropped and
    every key linked afresh once; the user's unmerges still hold."""
    store = connect(pg_url, "oldlinker")
    try:
        store.bind_space(SPACE)
        load_graph(store, {"a.md": ["Joel Cohen directed films."], "b.md": ["Cohen sang."],
                           "c.md": ["IBM grew.", "I.B.M. grew."]})  # fmt: skip
        assert store.link_synonyms() == 1  # ibm ~ i.b.m; cohen is written apart
        store.unmerge_entities("IBM", "I.B.M.")
        db = store._db

        def as_version_one(conn: Any) -> None:
            conn.execute(db.sql("INSERT INTO {s}.graph_synonyms VALUES "
                                "('cohen', 'joel cohen', 0.9)"))  # fmt: skip
            conn.execute(db.sql("UPDATE {s}.settings SET value = '1' WHERE key = 'graph_linker'"))

        db.run(as_version_one, "linking as version 1 did")
        assert store.graph_stats().synonym_links == 1
        assert store.link_synonyms() == 0
        assert store.graph_stats().synonym_links == 0
        assert store.link_synonyms() == 0
    finally:
        store.close()
