"""The SQLite schema: FTS5 reads the indexed text (header + text) where it was indexed from, so
SQLite's own integrity-check and rebuild are right; an index of schema 1 is upgraded in place,
in one transaction; creating the schema is one transaction, so a kill leaves all or nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from ragwright import ChunkingConfig, Index
from ragwright.errors import IndexDamaged, StoreError
from ragwright.stores.sqlite import SQLiteStore
from ragwright.stores.sqlite.schema import KEYWORD_HEADERS_DDL, REQUIRED, SCHEMA_VERSION
from ragwright.testing import HashingEmbedder

#: Schema 1 as it shipped: FTS5 content read from chunks.text, triggers indexing header + text.
V1_FTS = """
DROP TRIGGER chunks_fts_add; DROP TRIGGER chunks_fts_remove;
DROP TABLE chunks_fts; DROP VIEW chunks_indexed;
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_fts_add AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid,
        coalesce(json_extract(new.metadata, '$.table_header') || char(10), '') || new.text);
END;
CREATE TRIGGER chunks_fts_remove AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid,
        coalesce(json_extract(old.metadata, '$.table_header') || char(10), '') || old.text);
END;
INSERT INTO chunks_fts(rowid, text) SELECT rowid,
    coalesce(json_extract(metadata, '$.table_header') || char(10), '') || text FROM chunks;
UPDATE meta SET value = '1' WHERE key = 'schema_version';
"""


def table_index(folder: Path) -> Path:
    """An index of one long CSV table in small chunks: most chunks continue the table and
    carry its header; the word "population" is only in the header."""
    corpus = folder / "corpus"
    corpus.mkdir()
    rows = "\n".join(f"Town{i},{1000 + i}" for i in range(300))
    (corpus / "cities.csv").write_text(f"City,Population\n{rows}\n", encoding="utf-8")
    with Index(folder / "index", embedder=HashingEmbedder()) as kb:
        report = kb.ingest([corpus], chunking=ChunkingConfig("recursive", {"size": 200}))
        assert report.ok
    return folder / "index" / "index.sqlite3"


#: An index as it was before feature "table_headers": each header in its chunks' metadata.
WITHOUT_TABLE_HEADERS = """
UPDATE chunks SET metadata = json_set(metadata, '$.table_header',
    (SELECT text FROM table_headers WHERE id = header_id)) WHERE header_id IS NOT NULL;
UPDATE chunk_slots SET metadata = json_set(metadata, '$.table_header',
    (SELECT text FROM table_headers WHERE id = header_id)) WHERE header_id IS NOT NULL;
DROP TRIGGER chunk_slots_header_remove; DROP TRIGGER chunks_fts_add; DROP TRIGGER chunks_fts_remove;
DROP VIEW chunks_indexed; DROP INDEX chunks_header; DROP INDEX chunk_slots_header;
ALTER TABLE chunks DROP COLUMN header_id; ALTER TABLE chunk_slots DROP COLUMN header_id;
DROP TABLE table_headers;
DELETE FROM meta WHERE key = 'feature_table_headers';
"""


def without_table_headers(database: Path) -> None:
    """Put ``database`` back as it was before its headers had rows of their own (the view and
    triggers read them from the metadata as they did; the FTS5 index is unchanged)."""
    with sqlite3.connect(database) as db:
        db.executescript(WITHOUT_TABLE_HEADERS)
        db.executescript(KEYWORD_HEADERS_DDL)


def as_schema_1(database: Path) -> None:
    without_table_headers(database)
    with sqlite3.connect(database) as db:
        db.executescript(V1_FTS)


def header_matches(database: Path) -> int:
    with sqlite3.connect(database) as db:
        query = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'population'"
        return int(db.execute(query).fetchone()[0])


def fts(database: Path, command: str) -> None:
    with sqlite3.connect(database) as db:
        db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES (?, 1)", (command,))


def test_integrity_check_passes_and_rebuild_keeps_the_headers(tmp_path: Path) -> None:
    database = table_index(tmp_path)
    before = header_matches(database)
    with sqlite3.connect(database) as db:
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert before > 5 and before == chunks  # every chunk: the first has the header itself
    fts(database, "integrity-check")  # raises "database disk image is malformed" on schema 1
    fts(database, "rebuild")
    assert header_matches(database) == before
    fts(database, "integrity-check")


def test_schema_1_showed_the_audits_defects(tmp_path: Path) -> None:
    """What the audit saw, on an index as schema 1 built it: integrity-check calls it
    malformed, and rebuild leaves only the chunk whose own text has the header word."""
    database = table_index(tmp_path)
    before = header_matches(database)
    as_schema_1(database)
    assert header_matches(database) == before
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        fts(database, "integrity-check")
    fts(database, "rebuild")
    assert header_matches(database) == 1


def test_a_schema_1_index_is_upgraded_in_place_by_a_writer(tmp_path: Path) -> None:
    database = table_index(tmp_path)
    before = header_matches(database)
    as_schema_1(database)
    with SQLiteStore(database.parent, read_only=True) as store:  # a reader reads it as it is
        assert store.stats().schema_version == 1
        assert len(store.keyword_search("population", 100)) == before
    SQLiteStore(database.parent, create=False).close()
    with sqlite3.connect(database) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert version == (str(SCHEMA_VERSION),) and names >= REQUIRED
    assert header_matches(database) == before
    fts(database, "integrity-check")
    fts(database, "rebuild")
    assert header_matches(database) == before


KILLED_CREATE = textwrap.dedent(
    """
    import os, signal, sqlite3, sys
    from ragwright.stores.sqlite import SQLiteStore

    connect = sqlite3.connect

    def kill_before_fts(statement):
        if "CREATE VIRTUAL TABLE" in statement:
            os.kill(os.getpid(), signal.SIGKILL)

    def connect_and_watch(*args, **kwargs):
        db = connect(*args, **kwargs)
        db.set_trace_callback(kill_before_fts)
        return db

    sqlite3.connect = connect_and_watch
    SQLiteStore(sys.argv[1])
    """
)


def test_a_process_killed_while_creating_the_schema_leaves_no_index_file(tmp_path: Path) -> None:
    """Killed after the tables and before their FTS index: the schema was being made in a
    temporary file, so no index file appears, never half of one; the next open makes it."""
    run = subprocess.run([sys.executable, "-c", KILLED_CREATE, str(tmp_path)], check=False)
    assert run.returncode == -9
    database = tmp_path / "index.sqlite3"
    assert not database.exists()
    with pytest.raises(StoreError, match="no index at"):
        SQLiteStore(tmp_path, read_only=True)
    SQLiteStore(tmp_path).close()
    with sqlite3.connect(database) as db:
        assert {r[0] for r in db.execute("SELECT name FROM sqlite_master")} >= REQUIRED


def test_an_empty_database_is_damage_for_a_writer_too(tmp_path: Path) -> None:
    """What a kill during an in-place schema creation (before it was one transaction in a file
    of its own) could leave: an SQLite file without tables. It is no new index to fill."""
    database = tmp_path / "index.sqlite3"
    with closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA journal_mode=WAL")
    for options in ({"read_only": True}, {}):
        with pytest.raises(IndexDamaged, match="without any tables"):
            SQLiteStore(tmp_path, **options)
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == []


def test_two_stores_creating_one_index_at_once_share_it(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def create(_: int) -> int:
        with SQLiteStore(tmp_path / "index") as store:
            return store.stats().schema_version

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(create, range(4))) == [SCHEMA_VERSION] * 4
    assert [p.name for p in (tmp_path / "index").iterdir() if p.name.endswith(".creating")] == []


def test_a_feature_another_opener_added_first_is_not_added_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes opening an older index at once both see a feature missing; the later
    one's script then fails (``ADD COLUMN`` twice) where the flag says it is there."""
    SQLiteStore(tmp_path / "index").close()
    read = SQLiteStore.get_setting
    stale = ["feature_table_headers"]  # read before the other opener committed it

    def get_setting(self: SQLiteStore, key: str) -> str | None:
        if key in stale:
            stale.remove(key)
            return None
        return read(self, key)

    monkeypatch.setattr(SQLiteStore, "get_setting", get_setting)
    with SQLiteStore(tmp_path / "index") as store:
        assert store.stats().schema_version == SCHEMA_VERSION
    assert stale == []
