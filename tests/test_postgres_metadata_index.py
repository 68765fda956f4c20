"""The PostgreSQL store's metadata index: once loaded, filters on chunk metadata it has never
seen are answered in the serving process with the rows SQL gives, through another process's
writes, replacements, deletes, moves and metadata updates; a collection made again, or a log
pruned past the index, loads it again; past its budget, and for a document's source, filters
go to SQL; a search never uses a state newer than its own snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from psycopg import sql

from ragwright.filters import Filter, Readable, eq, parse_filter
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.keyword_log import prune
from ragwright.stores.postgres.metadata_index import MetadataIndex, _within
from ragwright.stores.postgres.metadata_segment import answerable
from ragwright.stores.postgres.rows import SNAPSHOT
from ragwright.stores.postgres.store import PostgresStore
from ragwright.testing.store_contract import SPACE, make_document, rekeyed, vectors_for

FILTERS: list[Filter] = [
    eq("shelf", 1),
    parse_filter('shelf in (0, 2) and colour = "red"'),
    parse_filter("not shelf >= 2 or round exists"),
    parse_filter('colour != "blue" and not (shelf = 3)'),
    eq("shelf", 99),  # matches nothing
]
SOURCE_FILTER = parse_filter('source in ("doc3.md", "doc7.md")')


def _write(store: PostgresStore, first: int, count: int) -> None:
    writes = []
    for number in range(first, first + count):
        metadata = {"shelf": number % 4, "colour": ["red", "blue"][number % 2]}
        document, chunks = make_document(f"doc{number}.md", ["a text", "another"], metadata)
        writes.append(DocumentWrite(document, chunks, vectors_for(document.source, 2)))
    store.write(writes)


@pytest.fixture
def stores(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """The same collection opened with the metadata index and without (filters in SQL)."""
    indexed_backend = PostgresBackend(pg_url)
    sql_backend = PostgresBackend(pg_url, vector_cache_mb=0, metadata_index_mb=0)
    indexed, in_sql = indexed_backend.open("mi"), sql_backend.open("mi")
    indexed.bind_space(SPACE)
    _write(indexed, 0, 16)
    yield indexed, in_sql
    for closing in (indexed, in_sql, indexed_backend, sql_backend):
        closing.close()


def _index(store: PostgresStore) -> MetadataIndex:
    index = store._filter_matches.index
    assert index is not None
    return index


def _sources(store: PostgresStore, where: Filter) -> list[tuple[str, str]]:
    hits = store.vector_search(np.ones(SPACE.dimension, dtype=np.float32), 100, where)
    return sorted((h.source, h.chunk.id) for h in hits)


def _check(indexed: PostgresStore, in_sql: PostgresStore, filters: list[Filter]) -> None:
    for where in filters:
        assert _sources(indexed, where) == _sources(in_sql, where), where


def _loaded(store: PostgresStore) -> None:
    """The index loaded: the first filtered search starts the load."""
    store.vector_search(np.ones(SPACE.dimension, dtype=np.float32), 1, eq("shelf", 0))
    store.wait_for_caches()
    assert _index(store)._state is not None


def test_filters_never_seen_are_answered_in_process_once_loaded(stores: Any) -> None:
    indexed, in_sql = stores
    _loaded(indexed)
    before = indexed._filter_matches.in_sql
    _check(indexed, in_sql, FILTERS)
    assert indexed._filter_matches.in_sql == before
    _check(indexed, in_sql, [SOURCE_FILTER])  # a document's source: in SQL
    assert indexed._filter_matches.in_sql == before + 1


def test_the_index_stays_exact_through_another_processs_changes(stores: Any, pg_url: str) -> None:
    indexed, in_sql = stores
    _loaded(indexed)
    before = indexed._filter_matches.in_sql
    with PostgresBackend(pg_url, vector_cache_mb=0, metadata_index_mb=0) as other:
        writer = other.open("mi")
        for round_ in range(3):
            _write(writer, 100 + 10 * round_, 3)  # new rows
            _write(writer, round_ * 2, 1)  # replaced: new rows, same metadata
            gone = writer.find_document(f"doc{8 + round_}.md")
            assert gone is not None
            writer.delete(gone.id)
            moved = writer.find_document(f"doc{12 + round_}.md")
            assert moved is not None
            own = [replace(c, metadata={"round": round_}) for c in writer.chunks_of(moved.id)]
            document, chunks = rekeyed(moved, own, f"moved{round_}.md", {"shelf": 1})
            assert writer.move_document(moved.id, document, chunks)  # metadata updated in place
            _check(indexed, in_sql, FILTERS)
            assert f"moved{round_}.md" in {s for s, _ in _sources(indexed, eq("shelf", 1))}
        writer.close()
    assert indexed._filter_matches.in_sql == before
    state = _index(indexed)._state
    assert state is not None and len(state.parts) > 1  # brought up to date, not loaded again


def test_a_collection_made_again_is_loaded_again(stores: Any, pg_url: str) -> None:
    indexed, in_sql = stores
    _loaded(indexed)
    first = _index(indexed)._state
    with PostgresBackend(pg_url, vector_cache_mb=0, metadata_index_mb=0) as other:
        other.drop_collection("mi")
        again = other.open("mi")
        again.bind_space(SPACE)
        _write(again, 40, 6)  # the same row ids, other metadata
        again.close()
    _check(indexed, in_sql, FILTERS)
    indexed.wait_for_caches()
    state = _index(indexed)._state
    assert state is not None and first is not None and state.at.log != first.at.log
    before = indexed._filter_matches.in_sql
    _check(indexed, in_sql, FILTERS)
    assert indexed._filter_matches.in_sql == before


def test_a_log_pruned_past_the_index_loads_it_again(stores: Any, pg_url: str) -> None:
    indexed, in_sql = stores
    _loaded(indexed)
    first = _index(indexed)._state
    with PostgresBackend(pg_url, vector_cache_mb=0, metadata_index_mb=0) as other:
        writer = other.open("mi")
        _write(writer, 200, 2)
        writer._db.run(lambda conn: prune(writer._db, conn, keep_seconds=0), "pruning")
        writer.close()
    _check(indexed, in_sql, FILTERS)  # in SQL while loading again
    indexed.wait_for_caches()
    state = _index(indexed)._state
    assert state is not None and state is not first and len(state.parts) == 1
    _check(indexed, in_sql, FILTERS)


def test_past_its_budget_every_filter_goes_to_sql(stores: Any) -> None:
    indexed, in_sql = stores
    _index(indexed)._budget = 100  # bytes: less than any collection's row ids
    _check(indexed, in_sql, FILTERS)
    indexed.wait_for_caches()
    index = _index(indexed)
    assert index._state is None and index._refused
    before = indexed._filter_matches.in_sql
    _check(indexed, in_sql, FILTERS)
    assert indexed._filter_matches.in_sql == before + len(FILTERS)
    assert index._loader is not None and not index._loader.is_alive()  # not tried again


def test_a_state_newer_than_the_searchs_snapshot_is_not_used(stores: Any, pg_url: str) -> None:
    indexed, _ = stores
    _loaded(indexed)
    where = eq("shelf", 1)
    condition, params = indexed._filters.compile(where)
    matches = indexed._filter_matches

    def older_search(conn: Any) -> tuple[list[int], list[int]]:
        conn.execute(SNAPSHOT)
        in_sql = sql.SQL("SELECT row_id FROM {s}.chunks c WHERE {where} ORDER BY 1").format(
            s=indexed._db.identifier, where=condition
        )
        want = conn.execute(in_sql, params).fetchall()
        # Meanwhile another process adds a matching row, and a newer search keeps its state.
        with PostgresBackend(pg_url, vector_cache_mb=0, metadata_index_mb=0) as other:
            writer = other.open("mi")
            _write(writer, 301, 1)
            writer.close()
        assert indexed.vector_search(np.ones(SPACE.dimension, dtype=np.float32), 50, where)
        found = matches.matches(conn, where, condition, params, 1000).row_ids
        conn.execute("COMMIT")
        assert found is not None
        return found.tolist(), [r[0] for r in want]

    before = matches.in_sql
    found, want = indexed._db.read(older_search, "an older search")
    assert found == want
    assert matches.in_sql == before + 1  # the newer state left alone: in SQL


def test_snapshots_taken_later_see_what_earlier_ones_saw() -> None:
    assert _within("100:105:100,102", "100:105:100,102")
    assert _within("100:105:100,102", "102:110:102,107")  # 100 ended; 102 still running
    assert _within("100:105:100,102", "100:105:100")
    assert not _within("100:105:100", "100:105:100,102")  # 102 ran for the later one only
    assert not _within("100:110:100", "100:105:100")  # the later one cannot see 105-109


def test_document_fields_and_permissions_are_left_to_sql() -> None:
    assert answerable(parse_filter("shelf = 1 and (colour exists or not year < 3)"))
    assert answerable(parse_filter("source exists"))
    assert not answerable(parse_filter('shelf = 1 and source = "a.md"'))
    assert not answerable(parse_filter('not document_id in ("x")'))
    assert not answerable(Readable(("alice",)))


def test_a_collection_emptied_and_written_again_stays_exact(stores: Any) -> None:
    indexed, in_sql = stores
    _loaded(indexed)
    for document in in_sql.list_documents():
        in_sql.delete(document.id)
    _check(indexed, in_sql, FILTERS)
    state = _index(indexed)._state
    assert state is not None and not state.parts
    _write(in_sql, 50, 3)
    _check(indexed, in_sql, FILTERS)
    assert _sources(indexed, eq("shelf", 2))
