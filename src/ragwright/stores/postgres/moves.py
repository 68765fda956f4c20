"""Moves (`ports.DocumentMove`): a renamed file's document re-keyed in one transaction. The
document row is copied under its new id and source, its chunks and BM25 postings re-pointed
(their vectors, token counts and terms kept: nothing is embedded or tokenized again), then the
old row removed; the BM25 counters move only for a document the move replaced. Graph facts
follow their chunks' new ids by cascade (`graph_move_schema`) and are given the new document
id here; the graph version is bumped when the moved or a replaced document had facts, since
a cached snapshot names chunks by id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.models import Chunk, Document
from ragwright.stores.moves import StoredChunk, check_move
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_move_schema import MOVE_FACT_DOCUMENTS
from ragwright.stores.postgres.graph_writes import bump_graph_version, had_facts
from ragwright.stores.postgres.permissions import write_readers
from ragwright.stores.postgres.row_writes import delete_documents, move_counters
from ragwright.stores.postgres.rows import jsonb
from ragwright.stores.postgres.table_headers import READ_METADATA
from ragwright.stores.postgres.writes import _LOCK_KEYS
from ragwright.stores.table_headers import split_header

if TYPE_CHECKING:
    from psycopg import Connection

_COPY_DOCUMENT = (
    "INSERT INTO {s}.documents (id, source, content, content_hash, fingerprint, metadata, "
    "sections) SELECT %s, %s, content, content_hash, fingerprint, %s, sections "
    "FROM {s}.documents WHERE id = %s"
)
_COPY_HEADERS = (
    "INSERT INTO {s}.table_headers (document_id, id, text) SELECT %s, id, text "
    "FROM {s}.table_headers WHERE document_id = %s"
)
_MOVE_CHUNKS = (
    "UPDATE {s}.chunks c SET id = m.new_id, document_id = %s, metadata = m.metadata "
    "FROM unnest(%s::int[], %s::text[], %s::jsonb[]) AS m(idx, new_id, metadata) "
    "WHERE c.document_id = %s AND c.idx = m.idx"
)
_MOVE_POSTINGS = (
    "UPDATE {s}.postings p SET chunk_id = m.new_id, document_id = %s "
    "FROM unnest(%s::text[], %s::text[]) AS m(old_id, new_id) WHERE p.chunk_id = m.old_id"
)


class PostgresMoves:
    """Moving a document to another source, in place."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db

    def move_document(self, document_id: str, moved: Document, chunks: Sequence[Chunk]) -> bool:
        # Each header is the stored one (checked): the rows keep naming it.
        metadata = [
            jsonb(split_header({**moved.metadata, **c.metadata})[0], moved.source) for c in chunks
        ]
        document_metadata = jsonb(moved.metadata, moved.source)

        def work(conn: Connection[Any]) -> bool:
            conn.execute(_LOCK_KEYS, ([document_id, moved.id, moved.source],))
            sql = self._db.sql
            found = conn.execute(
                sql("SELECT source, content FROM {s}.documents WHERE id = %s"), (document_id,)
            ).fetchone()
            if found is None:
                return False
            rows = conn.execute(
                sql(
                    "SELECT c.id, c.idx, c.text, c.char_start, c.char_end, "
                    f"{READ_METADATA} FROM {{s}}.chunks c WHERE c.document_id = %s"
                ),
                (document_id,),
            ).fetchall()
            stored = [StoredChunk(r[1], r[2], r[3], r[4], dict(r[5])) for r in rows]
            check_move(moved, chunks, found[0], found[1], stored)
            old_ids = {r[1]: r[0] for r in rows}
            replaced = [
                r[0]
                for r in conn.execute(
                    sql("SELECT id FROM {s}.documents WHERE (id = %s OR source = %s) AND id <> %s"),
                    (moved.id, moved.source, document_id),
                )
            ]
            graph_changed = had_facts(self._db, conn, [document_id, *replaced])
            if replaced:
                _, removed_chunks, removed_tokens = delete_documents(self._db, conn, replaced)
                move_counters(self._db, conn, -removed_chunks, -removed_tokens)
            if moved.id == document_id:
                conn.execute(
                    sql("UPDATE {s}.documents SET source = %s, metadata = %s WHERE id = %s"),
                    (moved.source, document_metadata, document_id),
                )
            else:
                conn.execute(
                    sql(_COPY_DOCUMENT), (moved.id, moved.source, document_metadata, document_id)
                )
                conn.execute(sql(_COPY_HEADERS), (moved.id, document_id))
            indices = [c.index for c in chunks]
            new_ids = [c.id for c in chunks]
            conn.execute(sql(_MOVE_CHUNKS), (moved.id, indices, new_ids, metadata, document_id))
            conn.execute(sql(_MOVE_POSTINGS), (moved.id, [old_ids[i] for i in indices], new_ids))
            if moved.id != document_id:
                for statement in MOVE_FACT_DOCUMENTS:
                    conn.execute(sql(statement), (moved.id, document_id))
                conn.execute(sql("DELETE FROM {s}.documents WHERE id = %s"), (document_id,))
            write_readers(self._db, conn, [(moved.id, moved.principals)])
            if graph_changed:
                bump_graph_version(self._db, conn)
            return True

        return self._db.run(work, "moving a document")
