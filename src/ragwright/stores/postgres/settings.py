"""The ``settings`` table: a collection's settings, the embedding space its vectors live in
(binding it adds the vector column and the HNSW index), and opening the schema: created if
need be, its version checked, its BM25 tokenizer settled."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragwright.errors import (
    EmbeddingSpaceChanged,
    EmbeddingSpaceMismatch,
    IndexTooNew,
    StoreError,
    UnknownCollection,
)
from ragwright.models import DEFAULT_COLLECTION, EmbeddingSpace
from ragwright.stores.fts_terms import settle_tokenizer
from ragwright.stores.postgres.community_schema import ensure_community_schema
from ragwright.stores.postgres.connections import lock_schema
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_move_schema import ensure_graph_moves
from ragwright.stores.postgres.graph_schema import (
    ensure_fact_vectors,
    ensure_graph_changes,
    ensure_graph_schema,
    ensure_relation_direction,
)
from ragwright.stores.postgres.keyword_log import ensure_keyword_log
from ragwright.stores.postgres.permissions import ensure_readers_schema
from ragwright.stores.postgres.schema import (
    HNSW_MAX_DIMENSION,
    METADATA_PATHS,
    SCHEMA_VERSION,
    ddl,
    hnsw_ddl,
    vector_ddl,
)
from ragwright.stores.postgres.table_headers import ensure_table_headers
from ragwright.stores.rows import space_from_json, space_json

if TYPE_CHECKING:
    from psycopg import Connection, Cursor


class PostgresSettings:
    """Key/value settings; the embedding space is one of them, recorded once."""

    _db: SchemaDatabase
    _space: EmbeddingSpace | None

    def get_setting(self, key: str) -> str | None:
        return self._db.run(lambda conn: self._db.setting(conn, key), "reading a setting")

    def set_setting(self, key: str, value: str) -> None:
        def work(conn: Connection[Any]) -> None:
            conn.execute(
                self._db.sql("INSERT INTO {s}.settings VALUES (%s, %s) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value "
                             "WHERE {s}.settings.value IS DISTINCT FROM excluded.value"),
                (key, value),
            )  # fmt: skip

        self._db.run(work, f"writing the setting {key!r}")

    @property
    def space(self) -> EmbeddingSpace | None:
        """The recorded embedding space; read from the database until it exists (only a
        `reindex` swap changes it then, which a vector search notices: `check_space`)."""
        if self._space is None:
            self._space = space_from_json(self.get_setting("embedding_space"))
        return self._space

    def bind_space(self, space: EmbeddingSpace) -> None:
        """Record the collection's embedding space — and add its vector column and HNSW
        index — or check that ``space`` is the recorded one."""
        recorded = self.space
        if recorded is None:
            recorded = self._db.run(lambda conn: self._bind(conn, space), "binding the space")
            self._space = recorded
        if not recorded.compatible_with(space):
            raise EmbeddingSpaceMismatch(recorded.describe(), space.describe())

    def _bind(self, conn: Connection[Any], space: EmbeddingSpace) -> EmbeddingSpace:
        lock_schema(conn, self._db.schema)
        recorded = space_from_json(self._db.setting(conn, "embedding_space"))
        if recorded is not None:  # another process bound it first
            return recorded
        conn.execute(
            self._db.sql("INSERT INTO {s}.settings VALUES ('embedding_space', %s)"),
            (space_json(space),),
        )
        conn.execute(vector_ddl(self._db.schema, space.dimension))
        if space.dimension <= HNSW_MAX_DIMENSION:
            self._build_hnsw(conn)
        return space

    def space_row(self, conn: Connection[Any]) -> Cursor[Any]:
        """In a search's transaction (a pipeline's, say): a share lock on the chunks (so a swap
        under way is waited for), and the recorded space's row, for `check_space`."""
        conn.execute(self._db.sql("LOCK TABLE {s}.chunks IN ACCESS SHARE MODE"))
        return conn.execute(
            self._db.sql("SELECT value FROM {s}.settings WHERE key = %s"), ("embedding_space",)
        )

    @contextmanager
    def space_checked(
        self, conn: Connection[Any], space: EmbeddingSpace | None, begin: str | None
    ) -> Iterator[None]:
        """A pipeline on ``conn`` (one round trip) that sends ``begin`` (if any) and
        `space_row`'s statements (if ``space``) before the caller's, and checks the space when
        it has run: `EmbeddingSpaceChanged` if it is not ``space``, also when a statement
        after it failed for that reason (a vector of the old dimension, say)."""
        row: Cursor[Any] | None = None
        try:
            with conn.pipeline():
                if begin is not None:
                    conn.execute(begin)
                if space is not None:
                    row = self.space_row(conn)
                yield
        except Exception:
            if space is not None and row is not None and row.pgresult is not None:
                self.check_space(row, space)  # the failure's reason?
            raise
        if space is not None and row is not None:
            self.check_space(row, space)

    def check_space(self, row: Cursor[Any], space: EmbeddingSpace) -> None:
        """`EmbeddingSpaceChanged` if the space `space_row` read is not ``space``."""
        found = row.fetchone()
        raw = None if found is None else str(found[0])
        recorded = space_from_json(self._db.checked(raw, "embedding_space"))
        if recorded is not None and recorded != space:
            self._space = recorded
            raise EmbeddingSpaceChanged(recorded.describe(), space.describe())

    def drop_vector_index(self) -> None:
        """Drop the HNSW index, e.g. before a bulk load (searches are exact meanwhile, and
        slow on a large collection); `create_vector_index` builds it again."""
        statement = self._db.sql("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw")
        self._db.run(lambda conn: conn.execute(statement), "dropping the vector index")

    def create_vector_index(self) -> None:
        """Build the HNSW index if it is missing (after `drop_vector_index` and a bulk load)."""
        space = self.space
        if space is None or space.dimension > HNSW_MAX_DIMENSION:
            return
        self._db.run(self._build_hnsw, "building the vector index")

    def _build_hnsw(self, conn: Connection[Any]) -> None:
        """Build the HNSW index if it is missing, in ``conn``'s transaction: the graph in
        memory (pgvector switches to a far slower build once it outgrows
        ``maintenance_work_mem``) with parallel workers, both set for this transaction only."""
        backend = self._db.backend
        conn.execute(
            f"SET LOCAL maintenance_work_mem = '{int(backend.hnsw_build_memory_mb)}MB'; "
            f"SET LOCAL max_parallel_maintenance_workers = {int(backend.hnsw_build_workers)}"
        )
        conn.execute(hnsw_ddl(self._db.schema, backend.hnsw_m, backend.hnsw_ef_construction))


def open_schema(
    db: SchemaDatabase, conn: Connection[Any], collection: str, create: bool, requested: str | None
) -> str:
    """Create the collection's schema if need be (once, whoever else is creating it), check
    its version and settle the BM25 tokenizer (returned); all in ``conn``'s transaction."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.settings",)).fetchone()
    if found is None or found[0] is None:
        if not create:
            raise _missing(collection, db.backend.display_url)
        lock_schema(conn, db.schema)
        conn.execute(ddl(db.schema))
        conn.execute(
            db.sql("INSERT INTO {s}.settings VALUES ('schema_version', %s) "
                   "ON CONFLICT DO NOTHING"),
            (str(SCHEMA_VERSION),),
        )  # fmt: skip
    version = db.setting(conn, "schema_version")
    if version is not None and version.isdigit() and int(version) > SCHEMA_VERSION:
        raise IndexTooNew(db.backend.display_url, int(version), SCHEMA_VERSION)
    if version is None or int(version) != SCHEMA_VERSION:
        raise StoreError(
            f"collection {collection!r} has schema version {version}, which this "
            f"ragwright does not support (expects {SCHEMA_VERSION}); re-index into a new "
            "collection"
        )
    ensure_graph_schema(db, conn)
    ensure_relation_direction(db, conn)
    ensure_graph_changes(db, conn)
    ensure_fact_vectors(db, conn)
    ensure_graph_moves(db, conn)
    ensure_community_schema(db, conn)
    ensure_readers_schema(db, conn)
    ensure_keyword_log(db, conn)
    ensure_table_headers(db, conn)
    ensure_metadata_paths(db, conn)
    recorded = db.setting(conn, "fts_tokenizer")
    chosen = settle_tokenizer(recorded, requested, "collection", "a new one")
    if recorded is None:
        conn.execute(
            db.sql("INSERT INTO {s}.settings VALUES ('fts_tokenizer', %s) "
                   "ON CONFLICT DO NOTHING"),
            (chosen,),
        )  # fmt: skip
    return chosen


def ensure_metadata_paths(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the index of metadata paths (`METADATA_PATHS`) to a collection made before it
    (once, whoever else is opening it)."""
    name = f"{db.schema}.chunks_metadata_path"
    found = conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(METADATA_PATHS))


def _missing(collection: str, location: str) -> StoreError:
    if collection == DEFAULT_COLLECTION:
        return StoreError(
            f"no index at {location}; create one with `ragwright ingest PATH --index {location}`"
        )
    return UnknownCollection(
        f"no collection {collection!r} in the index at {location}; create it with "
        f"`ragwright collections create {collection}`"
    )
