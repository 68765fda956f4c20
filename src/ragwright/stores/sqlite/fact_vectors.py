"""The typed facts' vectors in the SQLite store (``graph_fact_vectors``, `graph_schema`):
written by `graph build` for chunks whose facts are stored, read whole by query-to-fact
linking. A row hangs off its chunk's extraction, so it goes with the chunk's delete or its
facts' replacement (foreign key cascade), in that transaction."""

from __future__ import annotations

from collections.abc import Sequence

import numpy.typing as npt

from ragwright.models import EmbeddingSpace
from ragwright.models.graph import COOCCURRENCE_LABELS, FactVectors, StatedFact
from ragwright.stores.fact_vectors import (
    checked_space,
    fact_vectors_from_rows,
    space_key,
    vector_blobs,
)
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.settings import SQLiteSettings

_TYPED = ", ".join("?" * len(COOCCURRENCE_LABELS))


class SQLiteFactVectors:
    """Fact vectors, chunk by chunk."""

    def __init__(self, db: Database, settings: SQLiteSettings) -> None:
        self._db = db
        self._settings = settings

    def _exists(self) -> bool:
        """Whether the table is there (a read-only open of an older index lacks it)."""
        rows = self._db.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'graph_fact_vectors'"
        )
        return bool(rows)

    def chunks_without_fact_vectors(self, after: str | None, limit: int) -> list[str]:
        recorded = self._settings.space
        if recorded is None:
            return []
        key = space_key(recorded)
        rows = self._db.query(
            "SELECT DISTINCT c.id FROM graph_relations r JOIN chunks c ON c.rowid = r.chunk_rowid "
            f"WHERE c.id > ? AND r.label NOT IN ({_TYPED}) AND NOT EXISTS (SELECT 1 FROM "
            "graph_fact_vectors v WHERE v.chunk_rowid = r.chunk_rowid AND v.space = ?) "
            "ORDER BY c.id LIMIT ?",
            (after or "", *sorted(COOCCURRENCE_LABELS), key, max(0, limit)),
        )
        return [row[0] for row in rows]

    def write_fact_vectors(
        self, space: EmbeddingSpace, facts: Sequence[StatedFact], vectors: npt.ArrayLike
    ) -> int:
        key = space_key(checked_space(self._settings.space, space))
        blobs = vector_blobs(space, facts, vectors)
        if not facts:
            return 0
        with self._db.transaction() as db:
            for chunk_id in sorted({fact.chunk_id for fact in facts}):
                db.execute(
                    "DELETE FROM graph_fact_vectors WHERE chunk_rowid = "
                    "(SELECT rowid FROM chunks WHERE id = ?)",
                    (chunk_id,),
                )
            stored = 0
            for fact, blob in zip(facts, blobs, strict=True):
                # Only a fact the chunk still states (its facts may have been replaced, or
                # the chunk deleted, since they were read).
                stored += db.execute(
                    "INSERT OR REPLACE INTO graph_fact_vectors(chunk_rowid, source, label, "
                    "target, text, space, vector) SELECT r.chunk_rowid, ?, ?, ?, ?, ?, ? "
                    "FROM graph_relations r JOIN chunks c ON c.rowid = r.chunk_rowid "
                    "WHERE c.id = ? AND r.source = ? AND r.label = ? AND r.target = ? LIMIT 1",
                    (fact.fact.source, fact.fact.predicate, fact.fact.target, fact.text, key,
                     blob, fact.chunk_id, fact.fact.source, fact.fact.predicate,
                     fact.fact.target),
                ).rowcount  # fmt: skip
        return stored

    def fact_vector_version(self) -> str:
        if not self._exists():
            return "none"
        count, last = self._db.query("SELECT count(*), max(id) FROM graph_fact_vectors")[0]
        return f"{count}:{last}"

    def fact_vectors(self, space: EmbeddingSpace) -> FactVectors:
        bound = checked_space(self._settings.space, space)
        if not self._exists():
            return fact_vectors_from_rows("none", [], bound)
        with self._db.lock, self._db.read_snapshot():
            count, last = self._db.connection.execute(
                "SELECT count(*), max(id) FROM graph_fact_vectors"
            ).fetchone()
            rows = self._db.connection.execute(
                "SELECT source, label, target, vector FROM graph_fact_vectors WHERE space = ? "
                "ORDER BY id",
                (space_key(bound),),
            ).fetchall()
        return fact_vectors_from_rows(f"{count}:{last}", rows, bound)
