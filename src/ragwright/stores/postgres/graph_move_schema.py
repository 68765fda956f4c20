"""Moves for the entity graph's PostgreSQL tables: a feature block (added, like the graph's
own, under the schema lock in the opening transaction, to every collection that lacks it).

A move (`moves.PostgresMoves`) re-keys a document's chunks in place, so the evidence must
follow its chunk's new id: the three evidence tables' foreign keys become ``ON UPDATE
CASCADE`` (the graph's first tables were made without it, and a move of a document with
facts failed on them), and a trigger logs each re-keyed extraction's old and new chunk id
in ``graph_changes``, so a cached snapshot replays the move like a delete and a write. The
block's trigger function is its marker: a collection that has it has the whole block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.connections import lock_schema

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

_EVIDENCE = ("graph_extractions", "graph_mentions", "graph_relations")

_CASCADE = """
ALTER TABLE {{s}}.{table} DROP CONSTRAINT IF EXISTS {table}_chunk_id_fkey,
    ADD CONSTRAINT {table}_chunk_id_fkey FOREIGN KEY (chunk_id) REFERENCES {{s}}.chunks(id)
    ON DELETE CASCADE ON UPDATE CASCADE;
"""

GRAPH_MOVES_DDL = (
    "".join(_CASCADE.format(table=table) for table in _EVIDENCE)
    + """
CREATE OR REPLACE FUNCTION {s}.graph_changes_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.graph_changes (chunk_id) VALUES (OLD.chunk_id), (NEW.chunk_id);
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER graph_changes_moved AFTER UPDATE OF chunk_id ON {s}.graph_extractions
    FOR EACH ROW WHEN (OLD.chunk_id IS DISTINCT FROM NEW.chunk_id)
    EXECUTE FUNCTION {s}.graph_changes_moved();
"""
)

#: The moved evidence's distribution column (deletes and the version bump find facts by it).
MOVE_FACT_DOCUMENTS = tuple(
    f"UPDATE {{s}}.{table} SET document_id = %s WHERE document_id = %s" for table in _EVIDENCE
)


def ensure_graph_moves(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Make the graph's evidence follow moved chunks, once per collection (after
    `graph_schema.ensure_graph_changes`, whose log the trigger writes to)."""
    found = conn.execute(
        "SELECT to_regprocedure(%s)", (f"{db.schema}.graph_changes_moved()",)
    ).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(GRAPH_MOVES_DDL))
