"""A damaged index says so with a `StoreError`, never a raw SQLite traceback; text that is not
valid Unicode is a `ConfigError` at the store, never a `UnicodeEncodeError`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragwright import Index
from ragwright.errors import ConfigError, StoreError
from ragwright.models import Document, document_id_for
from ragwright.pipeline.retrieval import SearchMode
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from server_helpers import build_index

PAGE = 4096


def overwrite_page(database: Path, table: str) -> None:
    with sqlite3.connect(database) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    assert page_size == PAGE
    with database.open("r+b") as raw:
        raw.seek((root[0] - 1) * PAGE)
        raw.write(bytes(range(256)) * (PAGE // 256))


@pytest.mark.parametrize("mode", list(SearchMode))
def test_an_overwritten_page_of_the_chunks_table_is_a_store_error(
    tmp_path: Path, mode: SearchMode
) -> None:
    build_index(tmp_path).close()
    database = next((tmp_path / "index").rglob("*.sqlite3"))
    overwrite_page(database, "chunks")
    with pytest.raises(StoreError, match="malformed"), Index(tmp_path / "index") as index:
        index.search("install", mode=mode)


def test_a_lone_surrogate_in_a_lookup_or_a_write_is_a_config_error(tmp_path: Path) -> None:
    with build_index(tmp_path) as index, pytest.raises(ConfigError, match="lone surrogate"):
        index.document("docs/\udcff.md")
    source = "docs/bad.md"
    document = Document(id=document_id_for(source), source=source, content="a \ud800 b")
    with SQLiteStore(tmp_path / "store") as store:
        store.bind_space(HashingEmbedder().space)
        with pytest.raises(ConfigError, match="lone surrogate"):
            store.upsert(document, [], np.zeros((0, 256), dtype=np.float32))
        assert store.get_document(document.id) is None
