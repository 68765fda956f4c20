"""Filters through the indexed ``chunk_fields`` table give exactly what reading every chunk's
JSON gives (the reference form of the same filter), over random metadata and random filters;
and an index created before the table existed gets it, filled, when it is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from filter_strategies import random_filters
from ragwright.filters import Comparison, Filter
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore
from ragwright.stores.sqlite.filters import compile_filter, matching_rowids_query
from ragwright.testing.store_contract import SPACE, make_document, vectors_for

KEYS = ("a", "b", "year", "b\\k", 'q"', "")  # and keys JSON escapes, or a path cannot name
scalars = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.5, -1.5, 2.0, 1e300]),
    st.sampled_from(["", "x", "y", "1", "2", "é"]),
    st.booleans(),
)
values = st.one_of(
    scalars, st.none(), st.lists(scalars, max_size=2), st.dictionaries(st.just("k"), scalars)
)
metadata = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)


filters = random_filters(KEYS, scalars)


def rows(db: sqlite3.Connection, node: Filter, indexed: bool) -> list[int]:
    condition, params = compile_filter(node, indexed=indexed)
    found = db.execute(f"SELECT c.rowid FROM chunks c WHERE {condition}", params).fetchall()
    return sorted(r[0] for r in found)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(metadata, min_size=1, max_size=12), st.lists(filters, min_size=1, max_size=8))
def test_indexed_filters_equal_the_json_reference(
    tmp_path_factory: pytest.TempPathFactory,
    documents: list[dict[str, object]],
    asked: list[Filter],
) -> None:
    directory = tmp_path_factory.mktemp("index")
    store = SQLiteStore(directory, background=False)
    store.bind_space(SPACE)
    for i, meta in enumerate(documents):
        document, chunks = make_document(f"d{i}.md", [f"text {i}", f"more {i}"], meta)
        store.upsert(document, chunks, vectors_for(f"d{i}.md", 2))
    store.delete(store.list_documents()[0].id)  # the table follows deletes too
    db = sqlite3.connect(directory / DATABASE_NAME)
    query = np.ones(SPACE.dimension, dtype=np.float32)
    for node in asked:
        expected = rows(db, node, indexed=False)
        assert rows(db, node, indexed=True) == expected, node
        direct = matching_rowids_query(node)
        if direct is not None:
            assert sorted({r[0] for r in db.execute(*direct).fetchall()}) == expected, node
        hits = store.vector_search(query, 100, node)
        assert len(hits) == len(expected), node
    db.close()
    store.close()


def test_an_index_from_before_the_table_gets_it_filled_at_open(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    for i in range(20):
        document, chunks = make_document(f"d{i}.md", [f"text {i}"], {"n": i % 4, "t": "x"})
        store.upsert(document, chunks, vectors_for(f"d{i}.md", 1))
    store.close()
    db = sqlite3.connect(tmp_path / DATABASE_NAME)  # as an index written before the feature
    db.executescript(
        "DROP TRIGGER chunk_fields_add; DROP TRIGGER chunk_fields_remove; "
        "DROP TRIGGER chunk_fields_update; DROP TABLE chunk_fields; "
        "DELETE FROM meta WHERE key = 'feature_chunk_fields';"
    )
    db.close()
    reopened = SQLiteStore(tmp_path, background=False)
    hits = reopened.vector_search(
        np.ones(SPACE.dimension, dtype=np.float32), 50, Comparison("n", "=", 1)
    )
    assert sorted(h.chunk.metadata["n"] for h in hits) == [1] * 5


def test_the_filter_kept_for_a_hybrid_search_is_never_another_filters(tmp_path: Path) -> None:
    """The last filter's row ids are reused within one write generation, for the same filter
    only (a hybrid search's two arms), never after a write."""
    store = SQLiteStore(tmp_path, background=False)
    store.bind_space(SPACE)
    for name, value, text in (("a.md", "1", "same one"), ("b.md", 1, "same two"),
                              ("c.md", 2, "other three")):  # fmt: skip
        document, chunks = make_document(name, [text], {"flag": value})
        store.upsert(document, chunks, vectors_for(name, 1))

    def sources(where: Filter) -> set[str]:
        hits = store.vector_search(np.ones(4, dtype=np.float32), 10, where)
        return {store.get_document(h.chunk.document_id).source for h in hits}  # type: ignore[union-attr]

    assert sources(Comparison("flag", "=", "1")) == {"a.md"}
    assert sources(Comparison("flag", "=", 1)) == {"b.md"}
    keyword = store.keyword_search("two one", 10, Comparison("flag", "=", 1))  # the other arm
    assert [h.chunk.text for h in keyword] == ["same two"]
    document, chunks = make_document("d.md", ["same words"], {"flag": 1})
    store.upsert(document, chunks, vectors_for("d.md", 1))
    assert sources(Comparison("flag", "=", 1)) == {"b.md", "d.md"}
    store.close()
