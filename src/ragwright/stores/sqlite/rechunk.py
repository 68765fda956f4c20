"""Chunkings beside the current one (`ChunkingRebuild`): ``reindex --chunker`` builds a staged
chunking's chunk rows, with their vectors, in ``chunk_slots`` from the stored text while
searches read ``chunks``; the swap moves the current chunks to the ``previous`` slot and
inserts the incoming ones in one transaction.

``chunk_slot_documents`` records, per slot, the fingerprint (the stored version) of each
document whose chunks the slot holds: a document written since is re-chunked by the next
build, and a slot is swapped in only when it holds every stored document at its stored
version. The swap goes through ``chunks`` themselves, so their triggers rebuild what hangs off
the chunk rows (the FTS5 index, ``chunk_fields``, ``chunk_readers``, the change log the derived
caches replay), and the cascade from the deleted rows takes their graph facts and sparse
weights with them, logged for the graph's cached snapshots: nothing is left pointing at a
dropped chunk. Readers in WAL mode see the old chunks or the new, never a mix.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from ragwright.errors import StoreError
from ragwright.models import EmbeddingSpace
from ragwright.ports import (
    CHUNKING_GENERATION,
    GRAPH_OWED,
    Chunking,
    ChunkingSlot,
    ChunkingStatus,
    ChunkingSwapped,
    DocumentWrite,
    Slot,
    StoredText,
    Vectors,
)
from ragwright.stores.checks import check_write
from ragwright.stores.rechunk_messages import to_finish, under_way
from ragwright.stores.rows import document_from_row, space_json
from ragwright.stores.setting_rows import checked
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.settings import SQLiteSettings, recorded_space
from ragwright.stores.sqlite.table_headers import write_headers
from ragwright.stores.sqlite.writes import chunk_headers, chunk_rows
from ragwright.stores.top_k import best_positions

_KEYS: dict[Slot, str] = {"staged": "chunking_staged", "previous": "chunking_previous"}
_COLUMNS = "id, document_id, idx, text, char_start, char_end, metadata, vector, header_id"

#: Feature "chunk_slots" (additive): chunk rows of chunkings kept beside the current one.
CHUNK_SLOTS_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS chunk_slots (
    slot        TEXT NOT NULL CHECK (slot IN ('staged', 'previous', 'swapping')),
    document_id TEXT NOT NULL,
    idx         INTEGER NOT NULL,
    id          TEXT NOT NULL,
    text        TEXT NOT NULL,
    char_start  INTEGER NOT NULL,
    char_end    INTEGER NOT NULL,
    metadata    TEXT NOT NULL,
    vector      BLOB NOT NULL,
    PRIMARY KEY (slot, document_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_slot_documents (
    slot        TEXT NOT NULL CHECK (slot IN ('staged', 'previous', 'swapping')),
    document_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (slot, document_id)
) WITHOUT ROWID;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_chunk_slots', '1');
COMMIT;
"""

#: The documents whose stored version the slot ``?`` holds (``d`` the documents).
_HELD = (
    "EXISTS (SELECT 1 FROM chunk_slot_documents m WHERE m.slot = ? AND m.document_id = d.id "
    "AND m.fingerprint = d.fingerprint)"
)


class SQLiteRechunk:
    """A re-chunk: staged chunks (and their vectors), then a swap."""

    def __init__(self, db: Database, settings: SQLiteSettings) -> None:
        self._db = db
        self._settings = settings

    def chunking_status(self) -> ChunkingStatus:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            documents = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            staged, previous = (_slot(db, slot) for slot in ("staged", "previous"))
        return ChunkingStatus(documents, chunks, staged, previous)

    def unstaged_documents(self, after: str | None, limit: int) -> list[StoredText]:
        rows = self._db.query(
            "SELECT d.id, d.source, d.content, d.metadata, d.sections, d.fingerprint "
            f"FROM documents d WHERE d.id > ? AND NOT {_HELD} ORDER BY d.id LIMIT ?",
            (after or "", "staged", max(0, limit)),
        )
        return [StoredText(document_from_row(row[:5]), row[5]) for row in rows]

    def stage_chunks(self, chunking: Chunking, writes: Sequence[DocumentWrite]) -> None:
        for item in writes:
            check_write(item, chunking.space)
        with self._db.transaction() as db:
            recorded = _slot(db, "staged")
            if recorded is None:
                _record(db, "staged", chunking)
            elif recorded.chunking != chunking:
                raise StoreError(under_way(recorded.chunking))
            for item in writes:
                _stage(db, item)

    def staged_documents_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            staged = _slot(db, "staged")
            if staged is None:
                raise StoreError("no chunking is staged: run `ragwright reindex --chunker NAME`")
            dimension = staged.chunking.space.dimension
            rows = db.execute(
                "SELECT s.document_id, s.vector FROM chunk_slots s JOIN documents d "
                f"ON d.id = s.document_id WHERE s.slot = 'staged' AND {_HELD}",
                ("staged",),
            ).fetchall()
        documents = [row[0] for row in rows]
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")
        matrix = matrix.reshape(len(rows), dimension)
        matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        results = []
        for query in np.asarray(queries, dtype=np.float32).reshape(-1, dimension):
            scores = (matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))).astype(
                np.float32
            )
            best = best_positions(scores, np.arange(len(documents), dtype=np.int64), top_k)
            results.append([documents[i] for i in best])
        return results

    def swap_chunking(self, slot: Slot) -> ChunkingSwapped:
        with self._db.transaction() as db:
            incoming = _slot(db, slot)
            if incoming is None:
                raise StoreError(f"no {slot} chunking to swap in")
            documents = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            if incoming.documents != documents:
                raise StoreError(
                    f"{documents - incoming.documents:,} of {documents:,} documents have no "
                    f"chunks in the {slot} chunking; {to_finish(slot)}"
                )
            graph_chunks = db.execute("SELECT count(*) FROM graph_extractions").fetchone()[0]
            current = _current(db)
            for table in ("chunk_slots", "chunk_slot_documents"):
                db.execute(f"DELETE FROM {table} WHERE slot = 'swapping'")
            db.execute(
                f"INSERT INTO chunk_slots(slot, {_COLUMNS}) SELECT 'swapping', {_COLUMNS} "
                "FROM chunks"
            )
            db.execute(
                "INSERT INTO chunk_slot_documents(slot, document_id, fingerprint) "
                "SELECT 'swapping', id, fingerprint FROM documents"
            )
            db.execute("DELETE FROM chunks")  # triggers and cascades: FTS, fields, graph, …
            db.execute(
                f"INSERT INTO chunks({_COLUMNS}) SELECT {_COLUMNS} FROM chunk_slots s "
                "WHERE s.slot = ? AND EXISTS (SELECT 1 FROM documents d WHERE d.id = "
                f"s.document_id AND {_HELD}) ORDER BY s.document_id, s.idx",
                (slot, slot),
            )
            for table in ("chunk_slots", "chunk_slot_documents"):
                db.execute(f"DELETE FROM {table} WHERE slot IN (?, 'previous')", (slot,))
                db.execute(f"UPDATE {table} SET slot = 'previous' WHERE slot = 'swapping'")
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            made = incoming.chunking
            for key, value in (
                ("embedding_space", space_json(made.space)),
                ("embedder", made.embedder),
                ("chunking", made.chunker),
            ):
                _set(db, key, value)
            db.execute("DELETE FROM meta WHERE key = ?", (_KEYS[slot],))
            if current is not None:
                _record(db, "previous", current)
            # The vector spaces beside the current one belonged to the chunks just replaced.
            db.execute("DELETE FROM space_vectors")
            db.execute("DELETE FROM meta WHERE key IN ('space_staged', 'space_previous')")
            db.execute(
                "INSERT INTO meta(key, value) VALUES (?, '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (CHUNKING_GENERATION,),
            )
            if graph_chunks:  # the new chunks' facts are extracted after this commits
                _set(db, GRAPH_OWED, "1")
        self._settings.space_changed(made.space)
        return ChunkingSwapped(documents, chunks, graph_chunks)

    def drop_chunking(self, slot: Slot) -> None:
        with self._db.transaction() as db:
            drop_chunking_slot(db, slot)


def drop_chunking_slot(db: sqlite3.Connection, slot: Slot) -> None:
    """Free the chunking in ``slot`` inside the caller's transaction (an embedder swap drops
    the previous chunking: a rollback then means the embedder's)."""
    for table in ("chunk_slots", "chunk_slot_documents"):
        db.execute(f"DELETE FROM {table} WHERE slot = ?", (slot,))
    db.execute("DELETE FROM meta WHERE key = ?", (_KEYS[slot],))


def _stage(db: sqlite3.Connection, item: DocumentWrite) -> None:
    document = item.document
    db.execute("DELETE FROM chunk_slots WHERE slot = 'staged' AND document_id = ?", (document.id,))
    write_headers(db, chunk_headers(item).items())  # a slot's rows name them too
    db.executemany(
        f"INSERT INTO chunk_slots(slot, {_COLUMNS}) VALUES ('staged', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        chunk_rows(item),
    )
    db.execute(
        "INSERT OR REPLACE INTO chunk_slot_documents(slot, document_id, fingerprint) "
        "VALUES ('staged', ?, ?)",
        (document.id, item.fingerprint),
    )


def _slot(db: sqlite3.Connection, slot: Slot) -> ChunkingSlot | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (_KEYS[slot],)).fetchone()
    if row is None:
        return None
    checked(None, _KEYS[slot], row[0])
    documents, chunks = db.execute(
        f"SELECT count(*), coalesce(sum((SELECT count(*) FROM chunk_slots s WHERE s.slot = ? "
        f"AND s.document_id = d.id)), 0) FROM documents d WHERE {_HELD}",
        (slot, slot),
    ).fetchone()
    return ChunkingSlot(_chunking(json.loads(row[0])), documents, chunks)


def _current(db: sqlite3.Connection) -> Chunking | None:
    space = recorded_space(db)
    if space is None:
        return None
    settings = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'chunking')"))
    return Chunking(settings.get("chunking", ""), space, settings.get("embedder", ""))


def _chunking(recorded: dict[str, object]) -> Chunking:
    space = recorded["space"]
    assert isinstance(space, dict)
    return Chunking(str(recorded["chunker"]), EmbeddingSpace(**space), str(recorded["embedder"]))


def _record(db: sqlite3.Connection, slot: Slot, chunking: Chunking) -> None:
    value = {
        "chunker": chunking.chunker,
        "space": json.loads(space_json(chunking.space)),
        "embedder": chunking.embedder,
    }
    _set(db, _KEYS[slot], json.dumps(value, sort_keys=True))


def _set(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
