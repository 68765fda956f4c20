"""Embedding spaces beside the current one (`SpaceRebuild`) on PostgreSQL: a staged space's
vectors in ``space_vectors`` (an untyped ``vector`` column: any dimension), swapped into
``chunks.embedding`` in one transaction that also re-types the column and rebuilds its HNSW
index, keeping the vectors it replaced as the ``previous`` space.

The swap's ``ALTER TABLE`` holds an exclusive lock on the chunks until it commits, so searches
wait for it (they never fail); a search takes its share lock on the chunks before it reads the
recorded space (`check_space`), so it sees the space of the vectors it then ranks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ragwright.errors import StoreError
from ragwright.models import Chunk, EmbeddingSpace
from ragwright.ports import Slot, SpaceSlot, SpaceStatus, Vectors
from ragwright.stores.postgres.chunking_slots import drop_chunking_slot
from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.rows import CHUNK_COLUMNS
from ragwright.stores.postgres.schema import HNSW_MAX_DIMENSION, INLINE_VECTORS
from ragwright.stores.postgres.settings import PostgresSettings
from ragwright.stores.rows import chunk_from_row, space_from_json, space_json

if TYPE_CHECKING:
    from psycopg import Connection

_KEYS: dict[Slot, str] = {"staged": "space_staged", "previous": "space_previous"}
_TABLE = """
CREATE TABLE IF NOT EXISTS {s}.space_vectors (
    slot      text NOT NULL CHECK (slot IN ('staged', 'previous', 'swapping')),
    chunk_id  text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (slot, chunk_id)
)"""


class PostgresSpaces(PostgresSettings):
    def space_status(self) -> SpaceStatus:
        def work(conn: Connection[Any]) -> SpaceStatus:
            chunks = conn.execute(self._db.sql("SELECT count(*) FROM {s}.chunks")).fetchone()
            staged, previous = (self._slot(conn, slot) for slot in ("staged", "previous"))
            return SpaceStatus(int(chunks[0]) if chunks else 0, staged, previous)

        return self._db.run(work, "reading the spaces")

    def unstaged_chunks(self, after: str | None, limit: int) -> list[Chunk]:
        def work(conn: Connection[Any]) -> list[Any]:
            missing = (
                ""
                if not self._has_table(conn)
                else (
                    "AND NOT EXISTS (SELECT 1 FROM {s}.space_vectors v "
                    "WHERE v.slot = 'staged' AND v.chunk_id = c.id) "
                )
            )
            statement = self._db.sql(
                f"SELECT {CHUNK_COLUMNS} FROM {{s}}.chunks c JOIN {{s}}.documents d "
                f"ON d.id = c.document_id WHERE c.id > %s {missing}ORDER BY c.id LIMIT %s"
            )
            return conn.execute(statement, (after or "", max(0, limit))).fetchall()

        return [chunk_from_row(row) for row in self._db.run(work, "reading chunks to embed")]

    def stage_vectors(
        self, space: EmbeddingSpace, embedder: str, vectors: Mapping[str, Vectors]
    ) -> None:
        rows = []
        for chunk_id, vector in vectors.items():
            array = np.asarray(vector, dtype=np.float32).reshape(-1)
            if array.shape[0] != space.dimension or not np.isfinite(array).all():
                raise StoreError(f"chunk {chunk_id}: not a finite vector of {space.describe()}")
            rows.append((chunk_id, array))

        def work(conn: Connection[Any]) -> None:
            lock_schema(conn, self._db.schema)
            conn.execute(self._db.sql(_TABLE))
            recorded = self._slot(conn, "staged")
            if recorded is None:
                self._record(conn, "staged", space, embedder)
            elif recorded.space != space or recorded.embedder != embedder:
                raise StoreError(
                    f"a reindex to {recorded.embedder} is under way; finish it with "
                    f"`ragwright reindex --embedder {recorded.embedder}` or abandon it with "
                    "`ragwright reindex --abandon`"
                )
            with conn.cursor() as cursor:
                cursor.executemany(
                    self._db.sql(
                        "INSERT INTO {s}.space_vectors VALUES ('staged', %s, %s) "
                        "ON CONFLICT (slot, chunk_id) DO UPDATE SET embedding = excluded.embedding"
                    ),
                    rows,
                )

        self._db.run(work, "staging vectors")

    def staged_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        def work(conn: Connection[Any]) -> tuple[SpaceSlot | None, list[Any]]:
            staged = self._slot(conn, "staged")
            if staged is None:
                return None, []
            statement = self._db.sql(
                "SELECT v.chunk_id, v.embedding FROM {s}.space_vectors v JOIN {s}.chunks c "
                "ON c.id = v.chunk_id WHERE v.slot = 'staged' ORDER BY c.id"
            )
            return staged, conn.execute(statement).fetchall()

        staged, rows = self._db.run(work, "reading the staged space")
        if staged is None:
            raise StoreError("no space is staged: run `ragwright reindex --embedder NAME`")
        dimension = staged.space.dimension
        ids = [row[0] for row in rows]
        matrix = np.array([row[1].to_numpy() for row in rows], dtype=np.float32).reshape(
            len(rows), dimension
        )
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), np.float32(1e-12))
        results = []
        for query in np.asarray(queries, dtype=np.float32).reshape(-1, dimension):
            scores = matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))
            best = np.lexsort((np.arange(len(ids)), -scores))[:top_k]
            results.append([ids[i] for i in best])
        return results

    def swap_space(self, slot: Slot) -> None:
        incoming = self._db.run(lambda conn: self._swap(conn, slot), "swapping the space")
        self._space = incoming

    def drop_space(self, slot: Slot) -> None:
        def work(conn: Connection[Any]) -> None:
            if self._has_table(conn):
                conn.execute(self._db.sql("DELETE FROM {s}.space_vectors WHERE slot = %s"), (slot,))
            conn.execute(self._db.sql("DELETE FROM {s}.settings WHERE key = %s"), (_KEYS[slot],))

        self._db.run(work, "dropping a space")

    def _swap(self, conn: Connection[Any], slot: Slot) -> EmbeddingSpace:
        lock_schema(conn, self._db.schema)
        incoming = self._slot(conn, slot)
        if incoming is None:
            raise StoreError(f"no {slot} space to swap in")
        run = self._run_on(conn)
        chunks = run("SELECT count(*) FROM {s}.chunks").fetchone()[0]
        if incoming.vectors != chunks:
            raise StoreError(
                f"{chunks - incoming.vectors:,} of {chunks:,} chunks have no vector in the "
                f"{slot} space; {_finish(slot)}"
            )
        current = space_from_json(self._db.setting(conn, "embedding_space"))
        embedder = self._db.setting(conn, "embedder") or ""
        dimension = incoming.space.dimension
        run("DELETE FROM {s}.space_vectors WHERE slot = 'swapping'")
        run("INSERT INTO {s}.space_vectors SELECT 'swapping', id, embedding FROM {s}.chunks")
        run("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw")
        run("ALTER TABLE {s}.chunks DROP COLUMN embedding")
        run(f"ALTER TABLE {{s}}.chunks ADD COLUMN embedding vector({int(dimension)})")
        run(INLINE_VECTORS)
        run(
            "UPDATE {s}.chunks c SET embedding = v.embedding FROM {s}.space_vectors v "
            "WHERE v.slot = %s AND v.chunk_id = c.id",
            (slot,),
        )
        run("ALTER TABLE {s}.chunks ALTER COLUMN embedding SET NOT NULL")
        if dimension <= HNSW_MAX_DIMENSION:
            self._build_hnsw(conn)
        run("DELETE FROM {s}.space_vectors WHERE slot IN (%s, 'previous')", (slot,))
        run("UPDATE {s}.space_vectors SET slot = 'previous' WHERE slot = 'swapping'")
        for key, value in (
            ("embedding_space", space_json(incoming.space)),
            ("embedder", incoming.embedder),
        ):
            run(
                "INSERT INTO {s}.settings VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        run("DELETE FROM {s}.settings WHERE key = %s", (_KEYS[slot],))
        if current is not None:
            self._record(conn, "previous", current, embedder)
        drop_chunking_slot(self._db, conn, "previous")  # one rollback at a time: this swap's
        return incoming.space

    def _run_on(self, conn: Connection[Any]) -> Any:
        def run(text: str, params: tuple[object, ...] = ()) -> Any:
            return conn.execute(self._db.sql(text), params)

        return run

    def _has_table(self, conn: Connection[Any]) -> bool:
        found = conn.execute("SELECT to_regclass(%s)", (f"{self._db.schema}.space_vectors",))
        row = found.fetchone()
        return row is not None and row[0] is not None

    def _slot(self, conn: Connection[Any], slot: Slot) -> SpaceSlot | None:
        raw = self._db.setting(conn, _KEYS[slot])
        if raw is None or not self._has_table(conn):
            return None
        recorded = json.loads(raw)
        count = conn.execute(
            self._db.sql(
                "SELECT count(*) FROM {s}.space_vectors v JOIN {s}.chunks c "
                "ON c.id = v.chunk_id WHERE v.slot = %s"
            ),
            (slot,),
        ).fetchone()
        vectors = int(count[0]) if count else 0
        return SpaceSlot(EmbeddingSpace(**recorded["space"]), recorded["embedder"], vectors)

    def _record(
        self, conn: Connection[Any], slot: Slot, space: EmbeddingSpace, embedder: str
    ) -> None:
        value = json.dumps({"space": json.loads(space_json(space)), "embedder": embedder})
        conn.execute(
            self._db.sql(
                "INSERT INTO {s}.settings VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            (_KEYS[slot], value),
        )


def _finish(slot: Slot) -> str:
    if slot == "staged":
        return "finish building it: run `ragwright reindex` again with the same --embedder"
    return "chunks written since the swap have none; re-index instead of rolling back"
