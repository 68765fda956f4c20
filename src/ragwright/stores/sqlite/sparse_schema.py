"""The sparse learned-term arm's side tables (see `sparse`)."""

from __future__ import annotations

#: Feature "sparse" (additive; touches no existing table).
SPARSE_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS sparse_chunks (
    chunk_rowid INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS sparse_postings (
    term        INTEGER NOT NULL,
    chunk_rowid INTEGER NOT NULL,
    weight      REAL NOT NULL,
    PRIMARY KEY (term, chunk_rowid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sparse_postings_chunk ON sparse_postings(chunk_rowid);
CREATE TRIGGER IF NOT EXISTS sparse_remove AFTER DELETE ON chunks BEGIN
    DELETE FROM sparse_postings WHERE chunk_rowid = old.rowid;
    DELETE FROM sparse_chunks WHERE chunk_rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS sparse_retext AFTER UPDATE OF text ON chunks BEGIN
    DELETE FROM sparse_postings WHERE chunk_rowid = old.rowid;
    DELETE FROM sparse_chunks WHERE chunk_rowid = old.rowid;
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_sparse', '1');
COMMIT;
"""
