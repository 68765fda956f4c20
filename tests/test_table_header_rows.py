"""A table's header is stored once, in a row its chunks name, on both stores (issue 31): what
every reader sees of a chunk (its metadata, hits, scores, indexed text) is what it saw when
each chunk held the header itself; the row goes with the last chunk naming it; an index made
before is moved over in place and reads the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ragwright.chunkers import create_chunker
from ragwright.models import TABLE_HEADER, Document, document_id_for
from ragwright.parsers.csv import CsvParser
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import connect
from ragwright.stores.postgres.schema import schema_name
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.store_contract import SPACE, vectors_for
from test_schema_versions import without_table_headers

CHUNKER = "recursive"
OPTIONS = {"size": 200}
HEADER = "| City | Population |\n| --- | --- |"


def cities(header: str = "City,Population", rows: int = 300) -> bytes:
    lines = "\n".join(f"Town{i},{1000 + i}" for i in range(rows))
    return f"{header}\n{lines}\n".encode()


class Raw:
    """The stored rows themselves, read past the store (SQLite file or PostgreSQL schema)."""

    def __init__(self, query: Callable[[str], list[Any]]) -> None:
        self.query = query

    def headers(self) -> list[str]:
        return sorted(str(row[0]) for row in self.query("SELECT text FROM {s}table_headers"))

    def stored_headers(self) -> list[Any]:
        """The header value each chunk row's own metadata holds."""
        return [row[0] for row in self.query(_STORED_HEADER)]


_STORED_HEADER = "SELECT {header} FROM {s}chunks"


@pytest.fixture(params=["sqlite", "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def opened(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """(open the store, the raw rows) of a fresh index of the parametrized kind."""
    if store_kind == "sqlite":
        folder = tmp_path / "index"

        def open_sqlite(**options: Any) -> Any:
            return SQLiteStore(folder, **options)

        def query_sqlite(statement: str) -> list[Any]:
            text = statement.format(s="", header="json_extract(metadata, '$.table_header')")
            with closing(sqlite3.connect(folder / "index.sqlite3")) as db:
                return db.execute(text).fetchall()

        yield open_sqlite, Raw(query_sqlite)
        return
    url = request.getfixturevalue("pg_url")

    def open_pg(**options: Any) -> Any:
        options.pop("read_only", None)
        return connect(url, **options)

    def query_pg(statement: str) -> list[Any]:
        schema = schema_name("default")
        text = statement.format(s=f"{schema}.", header="metadata->'table_header'")
        with psycopg.connect(url) as db:
            return db.execute(text).fetchall()

    yield open_pg, Raw(query_pg)


def ingest(store: Any, source: str, content: bytes) -> Document:
    """Write ``content`` parsed, chunked and embedded, as ingest writes it."""
    if store.space is None:
        store.bind_space(SPACE)
    document = parsed(source, content)
    chunks = expected_chunks(document)
    store.write([DocumentWrite(document, chunks, vectors_for(source, len(chunks)))])
    return document


def expected_chunks(document: Document) -> list[Any]:
    return create_chunker(CHUNKER, **OPTIONS).chunk(document)


def test_a_tables_header_is_one_row_and_every_chunk_reads_it(opened: Any) -> None:
    open_store, raw = opened
    with open_store() as store:
        first = ingest(store, "cities.csv", cities())
        ingest(store, "towns.csv", cities(rows=200))  # the same header, another table
        stored = store.chunks_of(first.id)
        hits = store.keyword_search("population", 1000)
    expected = expected_chunks(first)
    assert [dict(c.metadata) for c in stored] == [dict(c.metadata) for c in expected]
    carrying = [c for c in stored if TABLE_HEADER in c.metadata]
    assert len(carrying) > 10 and {c.metadata[TABLE_HEADER] for c in carrying} == {HEADER}
    # Every chunk is found by the word only its header holds, as before.
    assert len(hits) == len(stored) + len(expected_chunks(parsed("towns.csv", cities(rows=200))))
    assert all(h.chunk.metadata.get(TABLE_HEADER) in (None, HEADER) for h in hits)
    # Stored once: one row per header (PostgreSQL: per document), none in the chunk rows.
    assert raw.headers() in ([HEADER], [HEADER, HEADER])
    assert all(value is None for value in raw.stored_headers())


def parsed(source: str, content: bytes) -> Document:
    found = CsvParser().parse(content, source)
    return Document(document_id_for(source), source, found.content, sections=found.sections)


def test_the_header_row_goes_with_the_last_chunk_naming_it(opened: Any) -> None:
    open_store, raw = opened
    with open_store() as store:
        ingest(store, "cities.csv", cities())
        ingest(store, "towns.csv", cities(rows=200))
        store.delete_many([document_id_for("towns.csv")])
        assert raw.headers() == [HEADER]  # still named by cities.csv's chunks
        ingest(store, "cities.csv", cities(header="Town,People"))  # replaced: a new header
        assert raw.headers() == ["| Town | People |\n| --- | --- |"]
        assert store.delete_many([document_id_for("cities.csv")]) == 1
        assert raw.headers() == []


#: PostgreSQL as it was before the headers had rows: each in its chunks' metadata.
PG_WITHOUT_TABLE_HEADERS = """
UPDATE {s}.chunks c SET metadata = c.metadata || jsonb_build_object('table_header', h.text)
    FROM {s}.table_headers h WHERE h.document_id = c.document_id AND h.id = c.header_id;
ALTER TABLE {s}.chunks DROP COLUMN header_id;
DROP TABLE {s}.table_headers;
"""


def test_an_index_made_before_is_moved_over_and_reads_the_same(
    opened: Any, store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    open_store, raw = opened
    with open_store() as store:
        document = ingest(store, "cities.csv", cities())
        before = store.chunks_of(document.id)
        hits_before = [(h.chunk.id, h.score) for h in store.keyword_search("population 1042", 50)]
    if store_kind == "sqlite":
        without_table_headers(tmp_path / "index" / "index.sqlite3")
        assert raw.stored_headers().count(HEADER) > 10  # the old layout
        with open_store(read_only=True) as store:  # read as it is, headers in the metadata
            assert store.chunks_of(document.id) == before
    else:
        with psycopg.connect(request.getfixturevalue("pg_url")) as db:
            db.execute(PG_WITHOUT_TABLE_HEADERS.format(s=schema_name("default")))
    with open_store() as store:  # a writer moves the headers to their rows
        assert store.chunks_of(document.id) == before
        hits = [(h.chunk.id, h.score) for h in store.keyword_search("population 1042", 50)]
    assert hits == hits_before
    assert raw.headers() == [HEADER]
    assert all(value is None for value in raw.stored_headers())
    if store_kind == "sqlite":
        with closing(sqlite3.connect(tmp_path / "index" / "index.sqlite3")) as db:
            db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
