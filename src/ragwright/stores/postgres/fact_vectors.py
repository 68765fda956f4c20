"""The typed facts' vectors in the PostgreSQL store (``graph_fact_vectors``, `graph_schema`):
written by `graph build` for chunks whose facts are stored, read whole by query-to-fact
linking; a chunk's delete or its facts' replacement cascades to them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy.typing as npt

from ragwright.models import EmbeddingSpace
from ragwright.models.graph import COOCCURRENCE_LABELS, FactVectors, StatedFact
from ragwright.stores.fact_vectors import (
    checked_space,
    fact_vectors_from_rows,
    space_key,
    vector_blobs,
)
from ragwright.stores.postgres.database import SchemaDatabase

if TYPE_CHECKING:
    from psycopg import Connection


class PostgresFactVectors:
    """Fact vectors, chunk by chunk."""

    def __init__(self, db: SchemaDatabase, space: Callable[[], EmbeddingSpace | None]) -> None:
        self._db = db
        self._space = space

    def chunks_without_fact_vectors(self, after: str | None, limit: int) -> list[str]:
        recorded = self._space()
        if recorded is None:
            return []
        key = space_key(recorded)
        rows = self._db.query(
            "SELECT DISTINCT r.chunk_id FROM {s}.graph_relations r "
            "WHERE r.chunk_id > %s AND NOT (r.label = ANY(%s)) AND NOT EXISTS (SELECT 1 FROM "
            "{s}.graph_fact_vectors v WHERE v.chunk_id = r.chunk_id AND v.space = %s) "
            "ORDER BY r.chunk_id LIMIT %s",
            (after or "", sorted(COOCCURRENCE_LABELS), key, max(0, limit)),
        )
        return [row[0] for row in rows]

    def write_fact_vectors(
        self, space: EmbeddingSpace, facts: Sequence[StatedFact], vectors: npt.ArrayLike
    ) -> int:
        key = space_key(checked_space(self._space(), space))
        blobs = vector_blobs(space, facts, vectors)
        if not facts:
            return 0
        chunks = sorted({fact.chunk_id for fact in facts})

        def work(conn: Connection[Any]) -> int:
            # KEY SHARE on the extractions: facts found here stay until this commits.
            conn.execute(
                self._db.sql(
                    "SELECT chunk_id FROM {s}.graph_extractions WHERE chunk_id = ANY(%s) "
                    "ORDER BY chunk_id FOR KEY SHARE"
                ),
                (chunks,),
            )
            conn.execute(
                self._db.sql("DELETE FROM {s}.graph_fact_vectors WHERE chunk_id = ANY(%s)"),
                (chunks,),
            )
            stored = 0
            for fact, blob in zip(facts, blobs, strict=True):
                # Only a fact the chunk still states.
                stored += conn.execute(
                    self._db.sql(
                        "INSERT INTO {s}.graph_fact_vectors (chunk_id, document_id, source, "
                        "label, target, text, space, vector) SELECT r.chunk_id, r.document_id, "
                        "%s, %s, %s, %s, %s, %s FROM {s}.graph_relations r WHERE r.chunk_id = %s "
                        "AND r.source = %s AND r.label = %s AND r.target = %s LIMIT 1 "
                        "ON CONFLICT DO NOTHING"
                    ),
                    (fact.fact.source, fact.fact.predicate, fact.fact.target, fact.text, key,
                     blob, fact.chunk_id, fact.fact.source, fact.fact.predicate,
                     fact.fact.target),
                ).rowcount  # fmt: skip
            return stored

        return self._db.run(work, "writing fact vectors")

    def fact_vector_version(self) -> str:
        count, last = self._db.query("SELECT count(*), max(id) FROM {s}.graph_fact_vectors")[0]
        return f"{count}:{last}"

    def fact_vectors(self, space: EmbeddingSpace) -> FactVectors:
        bound = checked_space(self._space(), space)

        def work(conn: Connection[Any]) -> FactVectors:
            row = conn.execute(
                self._db.sql("SELECT count(*), max(id) FROM {s}.graph_fact_vectors")
            ).fetchone()
            assert row is not None
            rows = conn.execute(
                self._db.sql(
                    "SELECT source, label, target, vector FROM {s}.graph_fact_vectors "
                    "WHERE space = %s ORDER BY id"
                ),
                (space_key(bound),),
            ).fetchall()
            return fact_vectors_from_rows(f"{row[0]}:{row[1]}", rows, bound)

        return self._db.run(work, "reading fact vectors")
