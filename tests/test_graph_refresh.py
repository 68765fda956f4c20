"""A store's cached graph snapshot, brought up to date from its change log after every write,
is exactly the snapshot a fresh read of the whole graph gives, and graph search ranks the
same on both: random sequences of writes, rewrites, deletes, moves, synonym linking, merges
and unmerges on both stores."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright.errors import RagwrightError
from ragwright.graph.ppr import WalkGraph, build_walk_graph
from ragwright.graph.search import GraphSearch, GraphSettings
from ragwright.graph.walk_cache import WalkGraphCache, patched_walk_graph
from ragwright.models.graph import GraphSnapshot
from ragwright.stores.graph_snapshot import SnapshotRows
from ragwright.stores.postgres import connect
from ragwright.stores.postgres.graph_refresh import CachedGraph as CachedPostgresGraph
from ragwright.stores.postgres.graph_refresh import current_graph as current_pg_graph
from ragwright.stores.postgres.graph_schema import BUMP_GRAPH_VERSION as PG_BUMP
from ragwright.stores.postgres.graph_schema import GRAPH_CHANGES_KEPT as PG_KEPT
from ragwright.stores.postgres.graph_writes import PRUNE_EVERY
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.graph_reads import snapshot_rows
from ragwright.stores.sqlite.graph_refresh import current_graph
from ragwright.stores.sqlite.graph_schema import BUMP_GRAPH_VERSION, GRAPH_CHANGES_KEPT
from ragwright.testing.graph_contract import graph_write
from ragwright.testing.store_contract import SPACE, make_document

NAMES = ["Ada Lovelace", "Lovelace", "Charles Babbage", "IBM", "I.B.M.", "London", "Turing"]
SOURCES = ["a.md", "b.md", "c.md"]
WEIGHTS = {"relation_weight": 0.5, "synonym_weight": 0.7}
FIELDS = (
    "mention_entity", "mention_chunk", "mention_count", "edge_source", "edge_target",
    "edge_weight", "synonym_source", "synonym_target", "synonym_weight",
)  # fmt: skip

sentence = st.lists(st.sampled_from(NAMES), min_size=0, max_size=4).map(
    lambda names: " ".join(f"{name} met" for name in names) + " end."
)
step = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(SOURCES), st.lists(sentence, min_size=1,
                                                                    max_size=3)),
    st.tuples(st.just("delete"), st.sampled_from(SOURCES)),
    st.tuples(st.just("move"), st.sampled_from(SOURCES), st.sampled_from(SOURCES)),
    st.tuples(st.just("link")),
    st.tuples(st.sampled_from(["merge", "unmerge"]), st.sampled_from(NAMES),
              st.sampled_from(NAMES)),
)  # fmt: skip
steps = st.lists(step, min_size=1, max_size=8)


def run(store: Any, action: tuple[Any, ...]) -> None:
    kind = action[0]
    if kind == "write":
        store.write([graph_write(action[1], action[2])])
    elif kind == "delete":
        store.delete(make_document(action[1], ["x"])[0].id)
    elif kind == "move":  # a rename, replacing the document at the new source if any
        stored = store.find_document(action[1])
        if stored is not None and action[1] != action[2]:
            moved, chunks = make_document(action[2], stored.content.split("\n\n"))
            assert store.move_document(stored.id, moved, chunks)
    elif kind == "link":
        store.link_synonyms()
    else:
        # an entity not in the graph now, or two names of one entity, is refused
        with contextlib.suppress(RagwrightError):
            getattr(store, f"{kind}_entities")(action[1], action[2])


def assert_same(kept: GraphSnapshot, fresh: GraphSnapshot) -> None:
    assert kept.version == fresh.version
    assert kept.entity_keys == fresh.entity_keys
    assert kept.entity_names == fresh.entity_names
    assert kept.chunk_ids == fresh.chunk_ids
    for field in FIELDS:
        assert np.array_equal(getattr(kept, field), getattr(fresh, field)), field
        assert getattr(kept, field).dtype == getattr(fresh, field).dtype, field
    if fresh.chunk_count:
        query = " and ".join(NAMES[:3])
        seeds = list(fresh.chunk_ids[:2])
        ranked = [
            GraphSearch().rank(query, seeds, snapshot, GraphSettings(), 10)
            for snapshot in (kept, fresh)
        ]
        assert ranked[0] == ranked[1]


def assert_same_walk(kept: WalkGraph, fresh: WalkGraph) -> None:
    assert (kept.version, kept.entities, kept.chunks) == (fresh.version, fresh.entities,
                                                          fresh.chunks)  # fmt: skip
    for name in ("transition", "chunk_entities"):
        for part in ("pointers", "columns", "values"):
            first, second = getattr(getattr(kept, name), part), getattr(getattr(fresh, name), part)
            assert np.array_equal(first, second), (name, part)
            assert first.dtype == second.dtype, (name, part)
    assert np.array_equal(kept.document_frequency, fresh.document_frequency)


def replay(open_store: Callable[[], Any], actions: list[tuple[Any, ...]]) -> None:
    """Each action on one store (its snapshot refreshed after each, and the walk's links
    with it), compared with a store opened afresh on the same data."""
    store = open_store()
    store.bind_space(SPACE)
    walks = WalkGraphCache()
    try:
        walks.get(store.graph_snapshot(), **WEIGHTS)
        for action in actions:
            run(store, action)
            fresh = open_store()
            try:
                kept, whole = store.graph_snapshot(), fresh.graph_snapshot()
                assert_same(kept, whole)
                assert_same_walk(walks.get(kept, **WEIGHTS), build_walk_graph(whole, **WEIGHTS))
            finally:
                fresh.close()
    finally:
        store.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=steps)
def test_sqlite_refreshed_snapshot_equals_a_fresh_read(actions: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix="graphrefresh") as name:
        replay(lambda: SQLiteStore(Path(name)), actions)


_collections = itertools.count()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(actions=steps)
def test_postgres_refreshed_snapshot_equals_a_fresh_read(
    pg_url: str, actions: list[tuple[Any, ...]]
) -> None:
    collection = f"refresh{next(_collections)}"
    replay(lambda: connect(pg_url, collection), actions)


# -- the SQLite log ----------------------------------------------------------------------


@pytest.fixture
def written(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "index")
    store.bind_space(SPACE)
    store.write([graph_write("a.md", ["Ada Lovelace met Charles Babbage in London."])])
    store.graph_snapshot()
    yield store
    store.close()


def _unread(db: Any) -> SnapshotRows:
    raise AssertionError("the whole graph was read")


def test_writes_and_deletes_are_replayed_without_reading_the_whole_graph(
    written: SQLiteStore,
) -> None:
    cached = written._graph_reads._graph_cache
    assert cached is not None
    db = sqlite3.connect(written.path)
    try:
        for change in (
            lambda: written.write([graph_write("b.md", ["Turing met Ada Lovelace in London."])]),
            written.link_synonyms,
            lambda: written.write([graph_write("a.md", ["Ada Lovelace wrote to Lovelace."])]),
            lambda: written.delete(make_document("b.md", ["x"])[0].id),
        ):
            change()
            walk = build_walk_graph(cached.snapshot, **WEIGHTS)
            cached = current_graph(db, cached, _unread)
            whole = current_graph(db, None, snapshot_rows).snapshot
            assert_same(cached.snapshot, whole)
            assert cached.snapshot.change is not None  # the walk's links are patched too
            assert_same_walk(
                patched_walk_graph(walk, cached.snapshot, cached.snapshot.change, **WEIGHTS),
                build_walk_graph(whole, **WEIGHTS),
            )
    finally:
        db.close()
    assert cached.snapshot.entity_keys == ("ada lovelace", "lovelace")
    assert cached.snapshot.entity_names == ("Ada Lovelace", "Lovelace")


def test_a_merge_decision_reads_the_whole_graph(written: SQLiteStore) -> None:
    cached = written._graph_reads._graph_cache
    assert cached is not None
    written.merge_entities("Ada Lovelace", "London")
    db = sqlite3.connect(written.path)
    try:
        with pytest.raises(AssertionError, match="whole graph"):
            current_graph(db, cached, _unread)
    finally:
        db.close()
    assert "london" not in written.graph_snapshot().entity_keys  # merged into ada lovelace


def test_the_log_is_pruned_and_a_reader_left_behind_reads_everything(
    written: SQLiteStore,
) -> None:
    cached = written._graph_reads._graph_cache
    assert cached is not None
    db = sqlite3.connect(written.path)
    try:
        with db:  # more synonym-link changes than the log keeps (of an entity with no links)
            db.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                "INSERT INTO graph_changes(key) SELECT 'turing' FROM n",
                (GRAPH_CHANGES_KEPT + 2048,),
            )
            db.execute(BUMP_GRAPH_VERSION)
        first, last, count = db.execute(
            "SELECT min(seq), max(seq), count(*) FROM graph_changes"
        ).fetchone()
        assert count <= GRAPH_CHANGES_KEPT + 1024
        assert first > cached.seq + 1
        with pytest.raises(AssertionError, match="whole graph"):
            current_graph(db, cached, _unread)
        assert current_graph(db, cached, snapshot_rows).seq == last
    finally:
        db.close()


# -- the PostgreSQL log --------------------------------------------------------------------


def test_postgres_prunes_its_log_and_a_reader_left_behind_reads_everything(pg_url: str) -> None:
    store = connect(pg_url)
    store.bind_space(SPACE)
    try:
        store.write([graph_write("a.md", ["Ada Lovelace met Charles Babbage in London."])])
        store.graph_snapshot()
        cached = store._graph_reads._graph_cache
        assert cached is not None
        db = store._db
        orphan = "INSERT INTO {s}.graph_changes (key) VALUES ('turing')"
        db.run(lambda conn: conn.execute(db.sql(orphan)), "a change no version stamps")
        for _ in range(PRUNE_EVERY // 2):  # 64 versions in a row: one is a pruning's
            store.write([graph_write("b.md", ["Turing met Ada Lovelace."])])
            store.delete(make_document("b.md", ["x"])[0].id)
        assert store.graph_snapshot() is not cached.snapshot

        def unstamped(conn: Any) -> int:
            sql = "SELECT count(*) FROM {s}.graph_changes WHERE version IS NULL"
            return int(conn.execute(db.sql(sql)).fetchone()[0])

        assert db.run(unstamped, "counting") == 0  # the orphan went with a pruning

        def behind(conn: Any) -> CachedPostgresGraph:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            version = str(int(cached.snapshot.version) + PG_KEPT + 1)
            return current_pg_graph(db, conn, version, cached, _unread)

        with pytest.raises(AssertionError, match="whole graph"):
            db.run(behind, "reading the graph")
    finally:
        store.close()


def test_a_moved_document_is_seen_under_its_new_chunk_ids(written: SQLiteStore) -> None:
    texts = ["Ada Lovelace met Charles Babbage in London."]
    before = written.graph_snapshot()
    document, _ = make_document("a.md", texts)
    moved, chunks = make_document("renamed.md", texts)
    assert written.move_document(document.id, moved, chunks)
    after = written.graph_snapshot()
    assert after.version != before.version
    assert after.chunk_ids == (chunks[0].id,) != before.chunk_ids
    fresh = SQLiteStore(written.directory)
    try:
        assert_same(after, fresh.graph_snapshot())
    finally:
        fresh.close()


def test_an_index_made_before_the_log_is_read_whole_when_opened_read_only(
    written: SQLiteStore,
) -> None:
    expected = written.graph_snapshot()
    db = sqlite3.connect(written.path)
    try:
        with db:  # as an index from before the log was
            names = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE ?"
            for (trigger,) in db.execute(names, ("graph_changes%",)).fetchall():
                db.execute(f"DROP TRIGGER {trigger}")
            db.execute("DROP TABLE graph_changes")
            db.execute("DELETE FROM meta WHERE key = 'feature_graph_changes'")
    finally:
        db.close()
    reader = SQLiteStore(written.directory, read_only=True)
    try:
        assert_same(reader.graph_snapshot(), expected)
        written.write([graph_write("b.md", ["Turing met Ada Lovelace in London."])])
        assert "turing" in reader.graph_snapshot().entity_keys
    finally:
        reader.close()


def test_postgres_stamps_the_changes_of_any_writer_that_bumps_the_version(pg_url: str) -> None:
    store = connect(pg_url)
    store.bind_space(SPACE)
    try:
        store.write([graph_write("a.md", ["Ada Lovelace met Charles Babbage in London."])])
        store.write([graph_write("b.md", ["Turing met Ada Lovelace."])])
        before = store.graph_snapshot()
        db = store._db
        document = make_document("b.md", ["x"])[0].id

        def older_writer(conn: Any) -> None:  # its own SQL: cascade, then the bare bump
            conn.execute(db.sql("DELETE FROM {s}.chunks WHERE document_id = %s"), (document,))
            conn.execute(db.sql(PG_BUMP))

        db.run(older_writer, "deleting a document's chunks")
        after = store.graph_snapshot()
        assert after.change is not None and after.change.base == before.version  # replayed
        assert "turing" not in after.entity_keys
        fresh = connect(pg_url)
        try:
            assert_same(after, fresh.graph_snapshot())
        finally:
            fresh.close()
    finally:
        store.close()
