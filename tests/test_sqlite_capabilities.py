"""Each capability of the SQLite store built alone on a real index file: its database handle
and what else it needs, no `SQLiteStore` around it. The file is filled (and closed) by a store
first; what the capability answers must be what the store answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragwright.errors import EmbeddingSpaceChanged
from ragwright.filters import eq
from ragwright.stores.fts_query import STOP_WORDS
from ragwright.stores.fts_terms import FTS5Terms
from ragwright.stores.sqlite import DATABASE_NAME, SQLiteStore
from ragwright.stores.sqlite.ann_choice import AnnChoice
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.schema import FTS_TOKENIZER
from ragwright.stores.sqlite.search import SQLiteSearch
from ragwright.stores.sqlite.settings import SQLiteSettings
from ragwright.testing.store_contract import OTHER_SPACE, SPACE, load_corpus, vectors_for


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A directory holding an index of the contract corpus, closed."""
    directory = tmp_path / "index"
    with SQLiteStore(directory, background=False) as store:
        store.bind_space(SPACE)
        load_corpus(store)
    return directory


@pytest.fixture
def db(index: Path) -> Iterator[Database]:
    database = Database(index / DATABASE_NAME)
    yield database
    database.close()


def test_settings_alone_read_the_space_and_tell_of_its_change(db: Database) -> None:
    settings = SQLiteSettings(db)
    forgotten: list[str] = []
    settings.on_space_changed(lambda: forgotten.append("vectors"))
    assert settings.space == SPACE
    settings.set_setting("example", "1")
    assert settings.get_setting("example") == "1"
    with db.lock, db.read_snapshot() as generation:
        settings.check_space(SPACE, generation)  # unchanged: nothing to forget
    assert forgotten == []
    settings.space_changed(OTHER_SPACE)
    assert settings.space == OTHER_SPACE and forgotten == ["vectors"]
    with db.lock, db.read_snapshot() as generation, pytest.raises(EmbeddingSpaceChanged):
        settings.check_space(OTHER_SPACE, generation)  # the file still records SPACE
    assert settings.space == SPACE and forgotten == ["vectors", "vectors"]


def search_alone(db: Database, *, keyword_cache: bool = True) -> SQLiteSearch:
    cache_key = SQLiteSettings(db).get_setting("derived_cache_key")
    assert cache_key is not None
    return SQLiteSearch(
        db,
        SQLiteSettings(db),
        cache_key,
        tokenizer=FTS5Terms(FTS_TOKENIZER),
        stop_words=STOP_WORDS,
        ann_choice=AnnChoice("off"),
        keyword_cache=keyword_cache,
        background=False,
    )


@pytest.mark.parametrize("keyword_cache", [True, False])
def test_search_alone_answers_as_the_store_does(index: Path, keyword_cache: bool) -> None:
    db = Database(index / DATABASE_NAME)
    search = search_alone(db, keyword_cache=keyword_cache)
    query = vectors_for("c.md", 1)[0]
    try:
        keyword = search.keyword_search("apples cherries", 10)
        vector = search.vector_search(query, 3)
        filtered = search.keyword_search("apples", 10, eq("year", 2023))
        both = search.hybrid_candidates("apples", query, 3)
    finally:
        search.close()
        db.close()
    with SQLiteStore(index, background=False, keyword_cache=keyword_cache) as store:
        assert keyword == store.keyword_search("apples cherries", 10)
        assert vector == store.vector_search(query, 3)
        assert both == store.hybrid_candidates("apples", query, 3)
    assert [h.chunk.text for h in filtered] == ["gamma apples and cherries"]
    assert {h.chunk.text for h in keyword} >= {"gamma apples and cherries"}
    assert vector[0].chunk.text == "gamma apples and cherries"
    assert vector[0].score == pytest.approx(1.0)
    # Its derived files are the store's: built beside the database, found by the next opener.
    if keyword_cache:
        assert (index / (DATABASE_NAME + ".bm25")).is_file()
    assert (index / (DATABASE_NAME + ".vectors")).is_file()


def test_search_alone_forgets_its_vectors_when_told(db: Database) -> None:
    search = search_alone(db)
    try:
        search.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), 1)
        assert search._vectors is not None
        search.forget_vectors()
        assert search._vectors is None
        hits = search.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), 1)
        assert hits[0].chunk.text == "alpha apples grow on trees"
    finally:
        search.close()
