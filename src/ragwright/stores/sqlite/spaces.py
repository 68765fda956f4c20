"""Embedding spaces beside the current one (`SpaceRebuild`): ``reindex`` builds a staged
space's vectors in ``space_vectors`` from the stored chunks while searches read
``chunks.vector``; the swap rewrites ``chunks.vector`` and the recorded space in one
transaction and keeps the vectors it replaced as the ``previous`` space, for a rollback.

Chunks keep their ids, rows, text and keyword index: only vectors move. The swap's update of
every chunk row is logged in ``chunk_changes``, and the vector cache is keyed by the space's
fingerprint (`cache_kinds`), so the derived caches of every process follow it. A search that
embedded its query in the old space finds the change inside its read snapshot
(`check_space`) and raises `EmbeddingSpaceChanged` instead of mixing spaces.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

import numpy as np

from ragwright.errors import StoreError
from ragwright.models import Chunk, EmbeddingSpace
from ragwright.ports import Slot, SpaceSlot, SpaceStatus, Vectors
from ragwright.stores.rows import chunk_from_row, space_json
from ragwright.stores.setting_rows import checked
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.rechunk import drop_chunking_slot
from ragwright.stores.sqlite.rows import CHUNK_COLUMNS
from ragwright.stores.sqlite.settings import SQLiteSettings, recorded_space
from ragwright.stores.top_k import best_positions

_KEYS: dict[Slot, str] = {"staged": "space_staged", "previous": "space_previous"}
#: Staged vectors read per fetch by `staged_search` (bounds the row tuples in flight).
_ROWS_PER_FETCH = 20_000


class SQLiteSpaces:
    """A reindex into another embedding space: staged vectors, then a swap."""

    def __init__(self, db: Database, settings: SQLiteSettings) -> None:
        self._db = db
        self._settings = settings

    def space_status(self) -> SpaceStatus:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            staged, previous = (_slot(db, slot) for slot in ("staged", "previous"))
        return SpaceStatus(chunks, staged, previous)

    def unstaged_chunks(self, after: str | None, limit: int) -> list[Chunk]:
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.id > ? AND NOT EXISTS (SELECT 1 "
            "FROM space_vectors s WHERE s.slot = 'staged' AND s.chunk_id = c.id) "
            "ORDER BY c.id LIMIT ?",
            (after or "", max(0, limit)),
        )
        return [chunk_from_row(row) for row in rows]

    def stage_vectors(
        self, space: EmbeddingSpace, embedder: str, vectors: Mapping[str, Vectors]
    ) -> None:
        rows = []
        for chunk_id, vector in vectors.items():
            array = np.ascontiguousarray(vector, dtype="<f4").reshape(-1)
            if array.shape[0] != space.dimension or not np.isfinite(array).all():
                raise StoreError(f"chunk {chunk_id}: not a finite vector of {space.describe()}")
            rows.append((chunk_id, array.tobytes()))
        with self._db.transaction() as db:
            recorded = _slot(db, "staged")
            if recorded is None:
                _record(db, "staged", space, embedder)
            elif recorded.space != space or recorded.embedder != embedder:
                raise StoreError(
                    f"a reindex to {recorded.embedder} is under way; finish it with "
                    "`ragwright reindex --embedder "
                    f"{recorded.embedder}` or abandon it with `ragwright reindex --abandon`"
                )
            db.executemany(
                "INSERT OR REPLACE INTO space_vectors(slot, chunk_id, vector) "
                "VALUES ('staged', ?, ?)",
                rows,
            )

    def staged_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            staged = _slot(db, "staged")
            if staged is None:
                raise StoreError("no space is staged: run `ragwright reindex --embedder NAME`")
            ids, matrix = _staged_matrix(db, staged.space.dimension)
        found = np.asarray(queries, dtype=np.float32).reshape(-1, staged.space.dimension)
        results = []
        for query in found:
            scores = matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))
            best = best_positions(scores, np.arange(len(ids), dtype=np.int64), top_k)
            results.append([ids[i] for i in best])
        return results

    def swap_space(self, slot: Slot) -> None:
        with self._db.transaction() as db:
            incoming = _slot(db, slot)
            if incoming is None:
                raise StoreError(f"no {slot} space to swap in")
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            covered = db.execute(
                "SELECT count(*) FROM chunks c JOIN space_vectors s "
                "ON s.slot = ? AND s.chunk_id = c.id",
                (slot,),
            ).fetchone()[0]
            if covered != chunks:
                raise StoreError(
                    f"{chunks - covered:,} of {chunks:,} chunks have no vector in the {slot} "
                    f"space; {_finish(slot)}"
                )
            current = recorded_space(db)
            embedder = db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
            db.execute("DELETE FROM space_vectors WHERE slot = 'swapping'")
            db.execute(
                "INSERT INTO space_vectors(slot, chunk_id, vector) "
                "SELECT 'swapping', id, vector FROM chunks"
            )
            db.execute(
                "UPDATE chunks SET vector = (SELECT s.vector FROM space_vectors s "
                "WHERE s.slot = ? AND s.chunk_id = chunks.id)",
                (slot,),
            )
            db.execute("DELETE FROM space_vectors WHERE slot IN (?, 'previous')", (slot,))
            db.execute("UPDATE space_vectors SET slot = 'previous' WHERE slot = 'swapping'")
            for key, value in (
                ("embedding_space", space_json(incoming.space)),
                ("embedder", incoming.embedder),
            ):
                _set(db, key, value)
            db.execute("DELETE FROM meta WHERE key = ?", (_KEYS[slot],))
            if current is not None:
                _record(db, "previous", current, str(embedder[0]) if embedder else "")
            drop_chunking_slot(db, "previous")  # one rollback at a time: this swap's
        self._settings.space_changed(incoming.space)

    def drop_space(self, slot: Slot) -> None:
        with self._db.transaction() as db:
            db.execute("DELETE FROM space_vectors WHERE slot = ?", (slot,))
            db.execute("DELETE FROM meta WHERE key = ?", (_KEYS[slot],))


def _slot(db: sqlite3.Connection, slot: Slot) -> SpaceSlot | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (_KEYS[slot],)).fetchone()
    if row is None:
        return None
    recorded = json.loads(str(checked(None, _KEYS[slot], row[0])))
    count = db.execute(
        "SELECT count(*) FROM space_vectors s JOIN chunks c ON c.id = s.chunk_id WHERE s.slot = ?",
        (slot,),
    ).fetchone()[0]
    return SpaceSlot(EmbeddingSpace(**recorded["space"]), recorded["embedder"], count)


def _record(db: sqlite3.Connection, slot: Slot, space: EmbeddingSpace, embedder: str) -> None:
    value = json.dumps({"space": json.loads(space_json(space)), "embedder": embedder})
    _set(db, _KEYS[slot], value)


def _set(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _staged_matrix(db: sqlite3.Connection, dimension: int) -> tuple[list[str], np.ndarray]:
    """The staged vectors of current chunks, unit length, with their chunk ids."""
    cursor = db.execute(
        "SELECT s.chunk_id, s.vector FROM space_vectors s JOIN chunks c ON c.id = s.chunk_id "
        "WHERE s.slot = 'staged' ORDER BY c.rowid"
    )
    ids: list[str] = []
    parts = []
    while batch := cursor.fetchmany(_ROWS_PER_FETCH):
        ids.extend(r[0] for r in batch)
        raw = b"".join(r[1] for r in batch)
        parts.append(np.frombuffer(raw, dtype="<f4").reshape(len(batch), dimension))
    matrix = np.concatenate(parts) if parts else np.empty((0, dimension), dtype=np.float32)
    norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), np.float32(1e-12))
    return ids, (matrix / norms).astype(np.float32)


def _finish(slot: Slot) -> str:
    if slot == "staged":
        return "finish building it: run `ragwright reindex` again with the same --embedder"
    return "chunks written since the swap have none; re-index instead of rolling back"
