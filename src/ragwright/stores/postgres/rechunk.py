"""Chunkings beside the current one (`ChunkingRebuild`) on PostgreSQL: a staged chunking's
chunk rows (with their vectors, in an untyped ``vector`` column: any dimension) and BM25
postings in ``chunk_slots`` and ``posting_slots``, made from the stored text while searches
read ``chunks``; the swap moves the current rows to the ``previous`` slot and the incoming ones
in, in one transaction, with the BM25 counters recounted.

``chunk_slot_documents`` records the fingerprint (stored version) of each document a slot
holds, as in the SQLite store: a slot is swapped in only when it holds every stored document
at its stored version. Deleting the chunks cascades to their graph facts and sparse weights,
logged by the graph's triggers, and the graph version moves. Searches see the old chunks or
the new (one snapshot each); when the dimension changes, the column is re-typed and its HNSW
index rebuilt, and searches wait for the swap (`check_space`), as for an embedder swap.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from ragwright.stores.postgres.chunking_slots import SLOT_KEYS as _KEYS
from ragwright.stores.postgres.chunking_slots import SLOT_TABLES as _SLOT_TABLES
from ragwright.stores.postgres.chunking_slots import drop_chunking_slot
from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.graph_writes import bump_graph_version
from ragwright.stores.postgres.row_writes import copy_rows
from ragwright.stores.postgres.schema import HNSW_MAX_DIMENSION, INLINE_VECTORS
from ragwright.stores.postgres.table_headers import SLOT_HEADERS_DDL, write_headers
from ragwright.stores.postgres.writes import PostgresWrites
from ragwright.stores.rechunk_messages import to_finish, under_way
from ragwright.stores.rows import document_from_row, space_from_json, space_json

if TYPE_CHECKING:
    from psycopg import Connection


_CHUNKS = "id, document_id, idx, text, char_start, char_end, metadata, tokens, embedding, header_id"
_POSTINGS = "term, chunk_id, document_id, tf, dl"
_SLOT = "slot text COLLATE \"C\" NOT NULL CHECK (slot IN ('staged', 'previous', 'swapping'))"
_TABLES = f"""
CREATE TABLE IF NOT EXISTS {{s}}.chunk_slots (
    {_SLOT},
    id          text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    idx         integer NOT NULL,
    text        text NOT NULL,
    char_start  integer NOT NULL,
    char_end    integer NOT NULL,
    metadata    jsonb NOT NULL,
    tokens      integer NOT NULL,
    embedding   vector NOT NULL,
    PRIMARY KEY (slot, document_id, idx)
);
CREATE TABLE IF NOT EXISTS {{s}}.posting_slots (
    {_SLOT},
    term        text COLLATE "C" NOT NULL,
    chunk_id    text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    tf          integer NOT NULL,
    dl          integer NOT NULL,
    PRIMARY KEY (slot, document_id, chunk_id, term)
);
CREATE TABLE IF NOT EXISTS {{s}}.chunk_slot_documents (
    {_SLOT},
    document_id text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    PRIMARY KEY (slot, document_id)
)"""
#: The documents ``d`` whose stored version the slot ``%s`` holds.
_HELD = (
    "EXISTS (SELECT 1 FROM {s}.chunk_slot_documents m WHERE m.slot = %s AND m.document_id = "
    "d.id AND m.fingerprint = d.fingerprint)"
)
#: The slot rows ``x`` of the documents whose stored version the slot holds.
_HELD_ROWS = f"EXISTS (SELECT 1 FROM {{s}}.documents d WHERE d.id = x.document_id AND {_HELD})"


class PostgresRechunk(PostgresWrites):
    def chunking_status(self) -> ChunkingStatus:
        def work(conn: Connection[Any]) -> ChunkingStatus:
            documents = self._one(conn, "SELECT count(*) FROM {s}.documents")
            chunks = self._one(conn, "SELECT count(*) FROM {s}.chunks")
            staged, previous = (self._chunking_slot(conn, slot) for slot in ("staged", "previous"))
            return ChunkingStatus(documents, chunks, staged, previous)

        return self._db.run(work, "reading the chunkings")

    def unstaged_documents(self, after: str | None, limit: int) -> list[StoredText]:
        def work(conn: Connection[Any]) -> list[Any]:
            held = f"AND NOT {_HELD} " if self._has_slots(conn) else ""
            statement = self._db.sql(
                "SELECT d.id, d.source, d.content, d.metadata, d.sections, d.fingerprint "
                f"FROM {{s}}.documents d WHERE d.id > %s {held}ORDER BY d.id LIMIT %s"
            )
            params = (after or "", "staged", max(0, limit)) if held else (after or "", limit)
            return conn.execute(statement, params).fetchall()

        rows = self._db.run(work, "reading documents to chunk")
        return [StoredText(document_from_row(row[:5]), row[5]) for row in rows]

    def stage_chunks(self, chunking: Chunking, writes: Sequence[DocumentWrite]) -> None:
        for item in writes:
            check_write(item, chunking.space)
        rows = self._rows(list(writes))

        def work(conn: Connection[Any]) -> None:
            lock_schema(conn, self._db.schema)
            conn.execute(self._db.sql(_TABLES))
            conn.execute(self._db.sql(SLOT_HEADERS_DDL))  # a slot table made before them
            recorded = self._chunking_slot(conn, "staged")
            if recorded is None:
                self._record_chunking(conn, "staged", chunking)
            elif recorded.chunking != chunking:
                raise StoreError(under_way(recorded.chunking))
            ids = [item.document.id for item in writes]
            for table in _SLOT_TABLES:
                conn.execute(
                    self._db.sql(
                        f"DELETE FROM {{s}}.{table} WHERE slot = 'staged' AND document_id = ANY(%s)"
                    ),
                    (ids,),
                )
            slot = ("slot", "text")
            write_headers(self._db, conn, [h for r in rows for h in r.headers])
            chunks, postings = _staged(rows)
            copy_rows(self._db, conn, "chunk_slots", (slot, *_CHUNK_TYPES), chunks)
            copy_rows(self._db, conn, "posting_slots", (slot, *_POSTING_TYPES), postings)
            marks: list[tuple[object, ...]] = [
                ("staged", item.document.id, item.fingerprint) for item in writes
            ]
            copy_rows(self._db, conn, "chunk_slot_documents", (slot, *_MARK_TYPES), marks)

        self._db.run(work, "staging chunks")

    def staged_documents_search(self, queries: Vectors, top_k: int) -> list[list[str]]:
        def work(conn: Connection[Any]) -> tuple[ChunkingSlot | None, list[Any]]:
            staged = self._chunking_slot(conn, "staged")
            if staged is None:
                return None, []
            statement = self._db.sql(
                "SELECT x.document_id, x.embedding FROM {s}.chunk_slots x "
                f"WHERE x.slot = 'staged' AND {_HELD_ROWS} ORDER BY x.document_id, x.idx"
            )
            return staged, conn.execute(statement, ("staged",)).fetchall()

        staged, rows = self._db.run(work, "reading the staged chunking")
        if staged is None:
            raise StoreError("no chunking is staged: run `ragwright reindex --chunker NAME`")
        dimension = staged.chunking.space.dimension
        documents = [row[0] for row in rows]
        matrix = np.array([row[1].to_numpy() for row in rows], dtype=np.float32)
        matrix = matrix.reshape(len(rows), dimension)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), np.float32(1e-12))
        results = []
        for query in np.asarray(queries, dtype=np.float32).reshape(-1, dimension):
            scores = matrix @ (query / max(float(np.linalg.norm(query)), 1e-12))
            best = np.lexsort((np.arange(len(documents)), -scores))[:top_k]
            results.append([documents[i] for i in best])
        return results

    def swap_chunking(self, slot: Slot) -> ChunkingSwapped:
        swapped, space = self._db.run(lambda conn: self._swap_chunking(conn, slot), "re-chunking")
        self._space = space
        return swapped

    def drop_chunking(self, slot: Slot) -> None:
        self._db.run(lambda conn: drop_chunking_slot(self._db, conn, slot), "dropping a chunking")

    def _swap_chunking(
        self, conn: Connection[Any], slot: Slot
    ) -> tuple[ChunkingSwapped, EmbeddingSpace]:
        lock_schema(conn, self._db.schema)
        incoming = self._chunking_slot(conn, slot)
        if incoming is None:
            raise StoreError(f"no {slot} chunking to swap in")
        documents = self._one(conn, "SELECT count(*) FROM {s}.documents")
        if incoming.documents != documents:
            raise StoreError(
                f"{documents - incoming.documents:,} of {documents:,} documents have no chunks "
                f"in the {slot} chunking; {to_finish(slot)}"
            )
        graph_chunks = self._graph_chunks(conn)
        current = self._current_chunking(conn)
        run = self._statement(conn)
        for table in _SLOT_TABLES:
            run(f"DELETE FROM {{s}}.{table} WHERE slot = 'swapping'")
        run(f"INSERT INTO {{s}}.chunk_slots (slot, {_CHUNKS}) SELECT 'swapping', {_CHUNKS} "
            "FROM {s}.chunks")  # fmt: skip
        run(f"INSERT INTO {{s}}.posting_slots (slot, {_POSTINGS}) SELECT 'swapping', "
            f"{_POSTINGS} FROM {{s}}.postings")  # fmt: skip
        run("INSERT INTO {s}.chunk_slot_documents SELECT 'swapping', id, fingerprint "
            "FROM {s}.documents")  # fmt: skip
        run("DELETE FROM {s}.postings")
        run("DELETE FROM {s}.chunks")  # cascades: graph facts, sparse weights
        space = incoming.chunking.space
        retype = current is None or current.space.dimension != space.dimension
        if retype:
            run("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw")
            run("ALTER TABLE {s}.chunks DROP COLUMN IF EXISTS embedding")
            run(f"ALTER TABLE {{s}}.chunks ADD COLUMN embedding vector({int(space.dimension)})")
            run(INLINE_VECTORS)
        run(f"INSERT INTO {{s}}.chunks ({_CHUNKS}) SELECT {_CHUNKS} FROM {{s}}.chunk_slots x "
            f"WHERE x.slot = %s AND {_HELD_ROWS} ORDER BY x.document_id, x.idx",
            (slot, slot))  # fmt: skip
        run(f"INSERT INTO {{s}}.postings ({_POSTINGS}) SELECT {_POSTINGS} FROM "
            f"{{s}}.posting_slots x WHERE x.slot = %s AND {_HELD_ROWS}", (slot, slot))  # fmt: skip
        if retype:
            run("ALTER TABLE {s}.chunks ALTER COLUMN embedding SET NOT NULL")
            if space.dimension <= HNSW_MAX_DIMENSION:
                self._build_hnsw(conn)
        run("UPDATE {s}.bm25_stats SET chunks = 0, tokens = 0")
        run("UPDATE {s}.bm25_stats SET (chunks, tokens) = (SELECT count(*), "
            "coalesce(sum(tokens), 0) FROM {s}.chunks) WHERE slot = 0")  # fmt: skip
        for table in _SLOT_TABLES:
            run(f"DELETE FROM {{s}}.{table} WHERE slot IN (%s, 'previous')", (slot,))
            run(f"UPDATE {{s}}.{table} SET slot = 'previous' WHERE slot = 'swapping'")
        made = incoming.chunking
        for key, value in (
            ("embedding_space", space_json(made.space)),
            ("embedder", made.embedder),
            ("chunking", made.chunker),
        ):
            self._put_setting(conn, key, value)
        run("DELETE FROM {s}.settings WHERE key = %s", (_KEYS[slot],))
        if current is not None:
            self._record_chunking(conn, "previous", current)
        # The vector spaces beside the current one belonged to the chunks just replaced.
        if self._exists(conn, "space_vectors"):
            run("DELETE FROM {s}.space_vectors")
        run("DELETE FROM {s}.settings WHERE key IN ('space_staged', 'space_previous')")
        run("INSERT INTO {s}.settings VALUES (%s, '1') ON CONFLICT (key) DO UPDATE "
            "SET value = (settings.value::bigint + 1)::text", (CHUNKING_GENERATION,))  # fmt: skip
        if graph_chunks:  # the new chunks' facts are extracted after this commits
            bump_graph_version(self._db, conn)
            self._put_setting(conn, GRAPH_OWED, "1")
        chunks = self._one(conn, "SELECT count(*) FROM {s}.chunks")
        return ChunkingSwapped(documents, chunks, graph_chunks), space

    def _graph_chunks(self, conn: Connection[Any]) -> int:
        if not self._exists(conn, "graph_extractions"):
            return 0
        return self._one(conn, "SELECT count(*) FROM {s}.graph_extractions")

    def _current_chunking(self, conn: Connection[Any]) -> Chunking | None:
        space = space_from_json(self._db.setting(conn, "embedding_space"))
        if space is None:
            return None
        embedder = self._db.setting(conn, "embedder") or ""
        return Chunking(self._db.setting(conn, "chunking") or "", space, embedder)

    def _chunking_slot(self, conn: Connection[Any], slot: Slot) -> ChunkingSlot | None:
        raw = self._db.setting(conn, _KEYS[slot])
        if raw is None or not self._has_slots(conn):
            return None
        recorded = json.loads(raw)
        chunking = Chunking(
            recorded["chunker"], EmbeddingSpace(**recorded["space"]), recorded["embedder"]
        )
        row = conn.execute(
            self._db.sql(
                "SELECT count(*), coalesce(sum((SELECT count(*) FROM {s}.chunk_slots x WHERE "
                f"x.slot = %s AND x.document_id = d.id)), 0) FROM {{s}}.documents d WHERE {_HELD}"
            ),
            (slot, slot),
        ).fetchone()
        assert row is not None
        return ChunkingSlot(chunking, int(row[0]), int(row[1]))

    def _record_chunking(self, conn: Connection[Any], slot: Slot, chunking: Chunking) -> None:
        value = {
            "chunker": chunking.chunker,
            "space": json.loads(space_json(chunking.space)),
            "embedder": chunking.embedder,
        }
        self._put_setting(conn, _KEYS[slot], json.dumps(value, sort_keys=True))

    def _put_setting(self, conn: Connection[Any], key: str, value: str) -> None:
        conn.execute(
            self._db.sql(
                "INSERT INTO {s}.settings VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            (key, value),
        )

    def _one(self, conn: Connection[Any], text: str) -> int:
        row = conn.execute(self._db.sql(text)).fetchone()
        return int(row[0]) if row else 0

    def _statement(self, conn: Connection[Any]) -> Any:
        def run(text: str, params: tuple[object, ...] = ()) -> Any:
            return conn.execute(self._db.sql(text), params)

        return run

    def _has_slots(self, conn: Connection[Any]) -> bool:
        return self._exists(conn, "chunk_slot_documents")

    def _exists(self, conn: Connection[Any], table: str) -> bool:
        row = conn.execute("SELECT to_regclass(%s)", (f"{self._db.schema}.{table}",)).fetchone()
        return row is not None and row[0] is not None


_CHUNK_TYPES = (
    ("id", "text"), ("document_id", "text"), ("idx", "int4"), ("text", "text"),
    ("char_start", "int4"), ("char_end", "int4"), ("metadata", "jsonb"), ("tokens", "int4"),
    ("embedding", "vector"), ("header_id", "text"),
)  # fmt: skip
_POSTING_TYPES = (
    ("term", "text"), ("chunk_id", "text"), ("document_id", "text"), ("tf", "int4"),
    ("dl", "int4"),
)  # fmt: skip
_MARK_TYPES = (("document_id", "text"), ("fingerprint", "text"))


def _staged(rows: Sequence[Any]) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The chunk and posting rows of each document's prepared rows, in the staged slot."""
    chunks = [("staged", *row) for prepared in rows for row in prepared.chunks]
    postings = [("staged", *row) for prepared in rows for row in prepared.postings]
    return chunks, postings
