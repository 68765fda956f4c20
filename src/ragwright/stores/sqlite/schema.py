"""The SQLite index schema. Readable with the `sqlite3` shell: one table per kind of thing.

- ``meta``: key/value settings — schema version, embedding space, embedder spec, chunker
  settings and the write generation that tells readers in other processes to refresh.
- ``documents``: one row per source: the normalized text every offset points into, the
  fingerprint used to skip unchanged files, metadata as JSON.
- ``chunks``: exact spans of a document with their vector (float32 little-endian BLOB) and
  metadata (document metadata merged with structural metadata such as the breadcrumb).
- ``chunks_indexed``: a view of each chunk's indexed text (`Chunk.indexed_text`: a chunk that
  continues a table after the table's header), which is what ``chunks_fts`` indexes.
- ``chunks_fts``: an FTS5 index over that text, external content read from the view and kept
  in step by triggers, so a document's replace or delete is one transaction across all
  tables, and SQLite's own ``integrity-check`` and ``rebuild`` see the text that was indexed.
- ``chunk_changes``: every chunk row added or removed, in order (additive feature block
  `CHANGES_DDL`): the derived caches beside the database file (`derived`) read it to catch up
  with the writes since they were built instead of rebuilding.

Creating the schema and each upgrade is one transaction (`create`, `upgrade`): a process killed
halfway leaves no schema or the whole one, never tables without their index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from ragwright.stores.sqlite.community_schema import ALIAS_DDL, COMMUNITY_DDL
from ragwright.stores.sqlite.graph_schema import (
    FACT_VECTORS_DDL,
    GRAPH_CHANGES_DDL,
    GRAPH_DDL,
    RELATION_DIRECTION_DDL,
)
from ragwright.stores.sqlite.permissions import READERS_DDL
from ragwright.stores.sqlite.rechunk import CHUNK_SLOTS_DDL
from ragwright.stores.sqlite.sparse_schema import SPARSE_DDL
from ragwright.stores.sqlite.table_headers import DROP_UNNAMED, header_text, table_headers_ddl

SCHEMA_VERSION = 2

#: English stemming (Porter) over Unicode words with diacritics folded. On SciFact it adds
#: +0.030 nDCG@10 on train and +0.017 on test over no stemming (benchmarks/bm25_ablation.py).
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
#: The tokenizer settings an index may be created with (spliced into DDL, so never free text).
FTS_TOKENIZERS = (FTS_TOKENIZER, "unicode61 remove_diacritics 2")

#: Every table, view and trigger of a complete schema (what `check` and a read-only open ask).
REQUIRED = frozenset(
    {"meta", "documents", "chunks", "chunks_indexed", "chunks_fts", "chunks_fts_add"}
    | {"chunks_fts_remove"}
)
#: What a version-1 schema holds (read as it is; the first write upgrades it).
REQUIRED_V1 = frozenset(("meta", "documents", "chunks", "chunks_fts"))

_META = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
)"""

_DOCUMENTS = """
CREATE TABLE IF NOT EXISTS documents (
    id           TEXT PRIMARY KEY,
    source       TEXT NOT NULL UNIQUE,
    content      TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    metadata     TEXT NOT NULL DEFAULT '{}',
    sections     TEXT NOT NULL DEFAULT '[]',
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)"""

_CHUNKS = """
CREATE TABLE IF NOT EXISTS chunks (
    rowid       INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    text        TEXT NOT NULL,
    char_start  INTEGER NOT NULL,
    char_end    INTEGER NOT NULL,
    metadata    TEXT NOT NULL DEFAULT '{}',
    vector      BLOB NOT NULL,
    UNIQUE (document_id, idx)
)"""


def _indexed_text(row: str) -> str:
    """`Chunk.keyword_text` in SQL, for the chunk ``row`` (``new``, ``old`` or a table), as
    the schema before feature "table_headers" read it (every header in the metadata)."""
    return _prefixed(row, "keyword_header", _prefixed(row, "table_header", f"{row}.text"))


def _headed_text(row: str) -> str:
    """`Chunk.keyword_text` in SQL once table headers have rows of their own."""
    table_header = _prefix(header_text(row), f"{row}.text")
    return _prefixed(row, "keyword_header", table_header)


def _prefixed(row: str, key: str, text: str) -> str:
    return _prefix(f"json_extract({row}.metadata, '$.{key}')", text)


def _prefix(header: str, text: str) -> str:
    return f"iif({header} <> '', {header} || char(10), '') || {text}"


#: The indexed text, one place for FTS5 to read it from (its external content).
_VIEW = f"""
CREATE VIEW IF NOT EXISTS chunks_indexed(chunk_rowid, text) AS
    SELECT c.rowid, {_indexed_text("c")} FROM chunks c"""

_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks_indexed', content_rowid='chunk_rowid', tokenize='{tokenizer}'
)"""

_TRIGGERS = (
    f"""
CREATE TRIGGER IF NOT EXISTS chunks_fts_add AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, {_indexed_text("new")});
END""",
    f"""
CREATE TRIGGER IF NOT EXISTS chunks_fts_remove AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text)
        VALUES ('delete', old.rowid, {_indexed_text("old")});
END""",
)

#: Version 1 read FTS5's content from ``chunks.text`` while indexing header + text, so SQLite's
#: ``integrity-check`` called a healthy index malformed and ``rebuild`` dropped the headers.
#: Its two generations of triggers go; the index is built again from the view, in place.
_UPGRADE_FROM_1 = (
    "DROP TRIGGER IF EXISTS chunks_fts_insert",
    "DROP TRIGGER IF EXISTS chunks_fts_delete",
    "DROP TRIGGER IF EXISTS chunks_fts_add",
    "DROP TRIGGER IF EXISTS chunks_fts_remove",
    "DROP TABLE IF EXISTS chunks_fts",
    _VIEW,
    _FTS,
    *_TRIGGERS,
    "INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')",
)

#: Feature "keyword_headers": the view and triggers of an index made before chunks had a
#: ``keyword_header`` (see `ragwright.chunkers.context_headers`) are made again to index it. No
#: rebuild: no chunk of such an index has one, so every indexed text stays what it was.
KEYWORD_HEADERS_DDL = f"""
BEGIN;
DROP TRIGGER IF EXISTS chunks_fts_add;
DROP TRIGGER IF EXISTS chunks_fts_remove;
DROP VIEW IF EXISTS chunks_indexed;
{_VIEW};
{";".join(_TRIGGERS)};
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_keyword_headers', '1');
COMMIT;
"""

#: Feature "table_headers" (`table_headers`): a table's header in one row that its chunk rows
#: name; the view and the FTS5 triggers read it from there (the removal then drops a header
#: no row names any more).
TABLE_HEADERS_DDL = table_headers_ddl(
    _VIEW.replace(_indexed_text("c"), _headed_text("c")),
    _TRIGGERS[0].replace(_indexed_text("new"), _headed_text("new")),
    _TRIGGERS[1]
    .replace(_indexed_text("old"), _headed_text("old"))
    .replace("END", f"    {DROP_UNNAMED};\nEND"),
)

#: The text FTS5 indexes for a chunk row (as the triggers above write it): what a cache that
#: tokenizes rows itself (`cache_kinds`) must index too.
FTS_TEXT = _headed_text("chunks")


def _checked(tokenizer: str) -> str:
    if tokenizer not in FTS_TOKENIZERS:
        raise ValueError(f"unknown FTS5 tokenizer {tokenizer!r}")
    return tokenizer


def create_statements(tokenizer: str) -> list[str]:
    """The statements that create a complete schema whose FTS5 index uses ``tokenizer``
    (each ``IF NOT EXISTS``: two processes creating one index at once both succeed)."""
    fts = _FTS.replace("{tokenizer}", _checked(tokenizer))
    return [_META, _DOCUMENTS, _CHUNKS, _VIEW, fts, *_TRIGGERS]


def create(db: sqlite3.Connection, tokenizer: str) -> None:
    """Create the schema and record its version and tokenizer: one transaction."""
    with _transaction(db):
        for statement in create_statements(tokenizer):
            db.execute(statement)
        for key, value in (("schema_version", str(SCHEMA_VERSION)), ("fts_tokenizer", tokenizer)):
            db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))


def upgrade(db: sqlite3.Connection, tokenizer: str) -> bool:
    """Bring an older schema to `SCHEMA_VERSION` in one transaction; False if another process
    did it first (the version is read again inside the transaction)."""
    steps = [s.replace("{tokenizer}", _checked(tokenizer)) for s in _UPGRADE_FROM_1]
    with _transaction(db):
        if recorded_version(db) != 1:
            return False
        for statement in steps:
            db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    return True


def recorded_version(db: sqlite3.Connection) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (DDL included: SQLite rolls schema changes back like any other)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise


#: Feature "chunk_changes" (additive; touches no existing table): a log of chunk rows added and
#: removed, written by triggers in the writer's transaction. A derived cache records the last
#: ``seq`` it has seen and replays what follows: a row id SQLite reuses after deleting the
#: highest row shows up as a removal then an addition, which comparing row ids could not tell.
#: AUTOINCREMENT: a sequence number is never reused.
CHANGES_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS chunk_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_rowid INTEGER NOT NULL,
    added       INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS chunk_changes_add AFTER INSERT ON chunks BEGIN
    INSERT INTO chunk_changes(chunk_rowid, added) VALUES (new.rowid, 1);
END;
CREATE TRIGGER IF NOT EXISTS chunk_changes_remove AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_changes(chunk_rowid, added) VALUES (old.rowid, 0);
END;
CREATE TRIGGER IF NOT EXISTS chunk_changes_update AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunk_changes(chunk_rowid, added) VALUES (old.rowid, 0), (new.rowid, 1);
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_chunk_changes', '1');
COMMIT;
"""

#: Feature "chunk_fields" (additive): each chunk's top-level scalar metadata values as
#: (key, value, chunk row) rows with an index, kept by triggers in the writer's transaction,
#: so an equality, ``in`` or range filter reads the matching rows instead of parsing every
#: chunk's JSON (`filters`). Values keep their JSON type (true/false as 1/0, as json_extract
#: gives them; ``kind``, the json_type, keeps them apart from numbers when ordering); lists,
#: objects and nulls are not indexed (they never equal a literal), nor is NaN (SQLite stores
#: it as NULL, and no filter can name it). Created on an existing index, it is filled from the
#: chunks in the same transaction.
FIELDS_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS chunk_fields (
    key         TEXT NOT NULL,
    value       NOT NULL,  -- no type: no affinity, each value keeps its JSON type
    chunk_rowid INTEGER NOT NULL,
    kind        TEXT NOT NULL,  -- json_type: 'true'/'false' apart from the numbers 1/0
    PRIMARY KEY (key, value, chunk_rowid)
) WITHOUT ROWID;
INSERT OR IGNORE INTO chunk_fields(key, value, chunk_rowid, kind)
    SELECT j.key, j.value, c.rowid, j.type FROM chunks c, json_each(c.metadata) j
    WHERE j.type IN ('text', 'integer', 'real', 'true', 'false') AND j.value IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS chunk_fields_add AFTER INSERT ON chunks BEGIN
    INSERT OR IGNORE INTO chunk_fields(key, value, chunk_rowid, kind)
        SELECT j.key, j.value, new.rowid, j.type FROM json_each(new.metadata) j
        WHERE j.type IN ('text', 'integer', 'real', 'true', 'false') AND j.value IS NOT NULL;
END;
CREATE TRIGGER IF NOT EXISTS chunk_fields_remove AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_fields WHERE (key, value, chunk_rowid) IN (
        SELECT j.key, j.value, old.rowid FROM json_each(old.metadata) j
        WHERE j.type IN ('text', 'integer', 'real', 'true', 'false') AND j.value IS NOT NULL
    );
END;
CREATE TRIGGER IF NOT EXISTS chunk_fields_update AFTER UPDATE OF metadata ON chunks BEGIN
    DELETE FROM chunk_fields WHERE chunk_rowid = old.rowid AND (key, value) IN (
        SELECT j.key, j.value FROM json_each(old.metadata) j
    );
    INSERT OR IGNORE INTO chunk_fields(key, value, chunk_rowid, kind)
        SELECT j.key, j.value, new.rowid, j.type FROM json_each(new.metadata) j
        WHERE j.type IN ('text', 'integer', 'real', 'true', 'false') AND j.value IS NOT NULL;
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_chunk_fields', '1');
COMMIT;
"""

#: Feature "spaces" (additive): vectors of embedding spaces kept beside the current one in
#: ``chunks.vector``, by chunk id: ``staged`` while `reindex` builds a new space, ``previous``
#: after a swap (for a rollback). Their spaces and embedders are in ``meta`` (``space_staged``,
#: ``space_previous``). See `spaces`.
SPACES_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS space_vectors (
    slot     TEXT NOT NULL CHECK (slot IN ('staged', 'previous', 'swapping')),
    chunk_id TEXT NOT NULL,
    vector   BLOB NOT NULL,
    PRIMARY KEY (slot, chunk_id)
) WITHOUT ROWID;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_spaces', '1');
COMMIT;
"""

#: The additive features, each applied once in its own transaction: meta flag → DDL. An
#: index that has the flag has the feature; one without gets it at its next open.
FEATURES = {
    "feature_chunk_changes": CHANGES_DDL,
    "feature_chunk_fields": FIELDS_DDL,
    "feature_graph": GRAPH_DDL,  # the entity graph (graph_schema)
    "feature_communities": COMMUNITY_DDL,  # its communities and reports (after the graph)
    "feature_graph_changes": GRAPH_CHANGES_DDL,  # the graph's change log (after the graph)
    "feature_community_aliases": ALIAS_DDL,  # merged keys of their members (after those)
    "feature_spaces": SPACES_DDL,
    "feature_sparse": SPARSE_DDL,  # the sparse learned-term arm's postings (sparse)
    "feature_permissions": READERS_DDL,  # who may read each document (permissions)
    "feature_chunk_slots": CHUNK_SLOTS_DDL,  # chunkings beside the current one (rechunk)
    "feature_keyword_headers": KEYWORD_HEADERS_DDL,  # a chunk's context header in FTS5's text
    # After the slots and the keyword headers' view: a table's header stored once.
    "feature_table_headers": TABLE_HEADERS_DDL,
    "feature_graph_fact_vectors": FACT_VECTORS_DDL,  # typed facts' vectors (after the graph)
    "feature_relation_direction": RELATION_DIRECTION_DDL,  # a typed fact's direction (graph)
}
