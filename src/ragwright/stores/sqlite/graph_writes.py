"""Graph facts in the SQLite store: written with their chunks (`insert_facts`, called inside
the document write's transaction) or later for stored chunks (`graph build`); a chunk's
delete takes its facts with it (foreign keys, ON DELETE CASCADE) and the aggregate triggers
take them out of the entities and edges in the same transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts
from ragwright.models.graph_records import FactsWritten
from ragwright.stores.graph_facts import FactRows, fact_rows, facts_from_rows
from ragwright.stores.rows import chunk_from_row
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.graph_schema import relation_ends
from ragwright.stores.sqlite.rows import CHUNK_COLUMNS


def insert_facts(db: sqlite3.Connection, chunk_rowid: int, rows: FactRows) -> FactsWritten:
    """Replace the facts of one stored chunk with ``rows`` (inside the caller's transaction)."""
    for table in ("graph_mentions", "graph_relations", "graph_extractions"):
        db.execute(f"DELETE FROM {table} WHERE chunk_rowid = ?", (chunk_rowid,))
    db.execute(
        "INSERT INTO graph_extractions(chunk_rowid, extractor) VALUES (?, ?)",
        (chunk_rowid, rows.extractor),
    )
    db.executemany(
        "INSERT INTO graph_mentions(chunk_rowid, extractor, char_start, char_end, text, key, "
        "label) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(chunk_rowid, rows.extractor, *mention) for mention in rows.mentions],
    )
    db.executemany(
        "INSERT INTO graph_relations(chunk_rowid, extractor, source, target, label, weight, "
        "reversed) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(chunk_rowid, rows.extractor, *relation) for relation in rows.relations],
    )
    return FactsWritten(1, len(rows.mentions), len(rows.relations), rows.unresolved)


class SQLiteGraphWrites:
    """Writes of the graph's facts, chunk by chunk."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def chunks_without_facts(self, extractor: str, after: str | None, limit: int) -> list[Chunk]:
        rows = self._db.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c "
            "LEFT JOIN graph_extractions g ON g.chunk_rowid = c.rowid "
            "WHERE c.id > ? AND (g.extractor IS NULL OR g.extractor != ?) "
            "ORDER BY c.id LIMIT ?",
            (after or "", extractor, max(0, limit)),
        )
        return [chunk_from_row(row) for row in rows]

    def write_facts(self, facts: Sequence[ChunkFacts]) -> FactsWritten:
        written = FactsWritten()
        if not facts:
            return written
        with self._db.transaction() as db:
            for item in facts:
                found = db.execute(
                    "SELECT rowid, text FROM chunks WHERE id = ?", (item.chunk_id,)
                ).fetchone()
                if found is None:  # deleted since it was read: its facts go with it
                    written += FactsWritten(skipped=1)
                    continue
                written += insert_facts(db, found[0], fact_rows(item, found[1]))
        return written

    def stored_facts(self, chunk_ids: Sequence[str]) -> list[ChunkFacts]:
        if not chunk_ids:
            return []
        wanted = ", ".join("?" * len(chunk_ids))
        join = f"JOIN chunks c ON c.rowid = g.chunk_rowid WHERE c.id IN ({wanted})"
        ids = tuple(chunk_ids)
        return facts_from_rows(
            self._db.query(f"SELECT c.id, g.extractor FROM graph_extractions g {join}", ids),
            self._db.query(
                "SELECT c.id, g.char_start, g.char_end, g.text, g.key, g.label "
                f"FROM graph_mentions g {join}",
                ids,
            ),
            self._db.query(
                f"SELECT c.id, {relation_ends(self._db, 'g')}, g.label, g.weight "
                f"FROM graph_relations g {join}",
                ids,
            ),
        )
