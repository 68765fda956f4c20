"""The re-chunk's slots (``staged``, ``previous``): their tables and settings rows, and how one
is dropped. Below `rechunk`, so that the settings repair and the embedder swap, which drop a
slot too, need nothing else of the re-chunk."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.ports import Slot

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

#: Each slot's settings row (what it holds: its chunking, its embedding space).
SLOT_KEYS: dict[Slot, str] = {"staged": "chunking_staged", "previous": "chunking_previous"}
SLOT_TABLES = ("chunk_slots", "posting_slots", "chunk_slot_documents")


def drop_chunking_slot(db: SchemaDatabase, conn: Connection[Any], slot: Slot) -> None:
    """Free the chunking in ``slot`` inside the caller's transaction (an embedder swap drops
    the previous chunking: a rollback then means the embedder's)."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.chunk_slot_documents",))
    row = found.fetchone()
    if row is not None and row[0] is not None:
        for table in SLOT_TABLES:
            conn.execute(db.sql(f"DELETE FROM {{s}}.{table} WHERE slot = %s"), (slot,))
    conn.execute(db.sql("DELETE FROM {s}.settings WHERE key = %s"), (SLOT_KEYS[slot],))
