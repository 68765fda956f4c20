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
from ragwright.testing.graph_contract import GraphContract, load_graph
from ragwright.testing.store_contract import SPACE


class TestPostgresGraph(GraphContract):
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
