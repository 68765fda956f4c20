"""`ragwright repair` for a PostgreSQL collection's broken settings rows (`setting_rows`), in one
transaction: nothing is written when one of them cannot be repaired (`RepairRefused`).

What each repair does, as the SQLite store's (`ragwright.stores.sqlite.setting_repair`): the
embedding space is made again from the recorded embedder, once it gives the stored vectors'
width; the chunking and parser options go back to their defaults (the next ingest records its
own); a staged or previous chunking or space whose record is broken is dropped (a reindex
builds it again). Other rows are refused: the BM25 tokenizer made the stored postings, and the
schema version says which tables there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragwright.errors import RepairRefused
from ragwright.models import EmbeddingSpace
from ragwright.stores.postgres.chunking_slots import drop_chunking_slot
from ragwright.stores.postgres.connections import has_column, lock_schema
from ragwright.stores.rows import space_json

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

#: The embedding space an embedder spec gives (`repair` is handed one by its caller).
SpaceOf = Callable[[str], EmbeddingSpace]
_Fix = Callable[["SchemaDatabase", "Connection[Any]", str, "SpaceOf | None"], str]


def repair_settings(db: SchemaDatabase, keys: Sequence[str], space_of: SpaceOf | None) -> list[str]:
    """Restore, reset or drop the rows ``keys`` in one transaction; what was done, a line
    each."""

    def work(conn: Connection[Any]) -> list[str]:
        lock_schema(conn, db.schema)  # no ingest or reindex reads a row half repaired
        return [_FIXES[key](db, conn, key, space_of) for key in keys]

    return db.run(work, "repairing the settings") if keys else []


def _reset(db: SchemaDatabase, conn: Connection[Any], key: str, space_of: SpaceOf | None) -> str:
    conn.execute(db.sql("DELETE FROM {s}.settings WHERE key = %s"), (key,))
    return f"reset the broken setting {key!r} to its default (the next ingest records its own)"


def _space(db: SchemaDatabase, conn: Connection[Any], key: str, space_of: SpaceOf | None) -> str:
    """The space the recorded embedder gives, once it fits the stored vectors' width."""
    row = conn.execute(db.sql("SELECT value FROM {s}.settings WHERE key = 'embedder'")).fetchone()
    location = db.backend.display_url
    if row is None or space_of is None:
        why = "no embedder is recorded" if row is None else "no embedder to ask"
        raise RepairRefused(location, [f"{key}: {why}, so the space cannot be restored"])
    try:
        space = space_of(str(row[0]))
    except Exception as error:  # any embedder's failure: say it, write nothing
        raise RepairRefused(location, [f"{key}: the embedder {row[0]!r} failed: {error}"]) from None
    if _stored_width(db, conn) not in (None, space.dimension):
        raise RepairRefused(
            location, [f"{key}: the embedder {row[0]!r} gives {space.describe()}, not the space "
                       "the stored vectors were made in"],
        )  # fmt: skip
    conn.execute(
        db.sql("UPDATE {s}.settings SET value = %s WHERE key = %s"), (space_json(space), key)
    )
    return f"restored the broken setting {key!r} from the embedder {row[0]} ({space.describe()})"


def _stored_width(db: SchemaDatabase, conn: Connection[Any]) -> int | None:
    """The width of the stored vectors (None: no vector column or no chunk yet)."""
    if not has_column(conn, db.schema, "chunks", "embedding"):
        return None
    row = conn.execute(db.sql("SELECT vector_dims(embedding) FROM {s}.chunks LIMIT 1")).fetchone()
    return None if row is None else int(row[0])


def _dropped_space(
    db: SchemaDatabase, conn: Connection[Any], key: str, space_of: SpaceOf | None
) -> str:
    slot = key.split("_", 1)[1]
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.space_vectors",)).fetchone()
    if found is not None and found[0] is not None:
        conn.execute(db.sql("DELETE FROM {s}.space_vectors WHERE slot = %s"), (slot,))
    conn.execute(db.sql("DELETE FROM {s}.settings WHERE key = %s"), (key,))
    return _dropped(slot, "space", key)


def _dropped_chunking(
    db: SchemaDatabase, conn: Connection[Any], key: str, space_of: SpaceOf | None
) -> str:
    slot = key.split("_", 1)[1]
    drop_chunking_slot(db, conn, "staged" if slot == "staged" else "previous")
    return _dropped(slot, "chunking", key)


def _dropped(slot: str, kind: str, key: str) -> str:
    again = "`ragwright reindex` builds it again" if slot == "staged" else "no rollback to it"
    return f"dropped the {slot} {kind} ({key!r} was broken; {again})"


#: What `repair` does with each row (`repairable.REPAIRS` says so in a finding).
_FIXES: dict[str, _Fix] = {
    "embedding_space": _space,
    "chunking": _reset,
    "parser_options": _reset,
    "space_staged": _dropped_space,
    "space_previous": _dropped_space,
    "chunking_staged": _dropped_chunking,
    "chunking_previous": _dropped_chunking,
}
