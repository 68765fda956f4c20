"""The SQLite store keeps the `SpaceRebuild` contract (``ragwright reindex``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.cache_kinds import VECTORS_SUFFIX
from ragwright.testing.space_contract import (
    NEW_SPACE,
    SPACE,
    SpaceRebuildContract,
    fill,
    new_vector,
    old_vector,
)


class TestSQLiteSpaces(SpaceRebuildContract):
    @pytest.fixture
    def open_again(self, tmp_path: Path) -> Callable[[], SQLiteStore]:
        return functools.partial(SQLiteStore, tmp_path / "index")

    @pytest.fixture
    def store(self, open_again: Callable[[], SQLiteStore]) -> Iterator[SQLiteStore]:
        with open_again() as opened:
            opened.bind_space(SPACE)
            yield opened


def test_the_vector_cache_file_follows_the_swap(tmp_path: Path) -> None:
    """The derived vector file written before the swap is not taken for the new space's."""
    with SQLiteStore(tmp_path / "index") as store:
        store.bind_space(SPACE)
        chunks = fill(store)
        assert [h.chunk.id for h in store.vector_search(old_vector(2), 1)] == [chunks[2].id]
        cache = store.path.with_name(store.path.name + VECTORS_SUFFIX)
        assert cache.exists()
        store.stage_vectors(NEW_SPACE, "new", {c.id: new_vector(i) for i, c in enumerate(chunks)})
        store.swap_space("staged")
    with SQLiteStore(tmp_path / "index") as fresh:
        for i, chunk in enumerate(chunks):
            hits = fresh.vector_search(new_vector(i), 1)
            assert [h.chunk.id for h in hits] == [chunk.id]
            assert hits[0].score == pytest.approx(1.0, abs=1e-5)
