"""The PostgreSQL schema of one collection: one PostgreSQL schema (``ragwright_<name>``) each.

- ``settings``: key/value — schema version, embedding space, BM25 tokenizer, embedder and
  chunker settings.
- ``documents``: one row per source: the normalized text every offset points into, the
  fingerprint ingest compares, metadata and sections as ``jsonb``.
- ``chunks``: exact spans of a document with metadata (document metadata merged with the
  chunk's), their BM25 length in tokens, and their vector (``vector(dim)``, added with its HNSW
  index when the embedding space is bound: the dimension is known only then).
- ``postings``: BM25's inverted index: (term, chunk, term frequency, chunk length), terms made
  by SQLite FTS5's tokenizer (`ragwright.stores.fts_terms`), so they are the SQLite store's.
- ``bm25_stats``: chunk count and token total, striped over 64 rows: a write adds its delta to
  the row of its connection (``pg_backend_pid() % 64``) and a query sums them, so concurrent
  writers do not queue on one hot row and readers see counts consistent with their snapshot.

Every table carries ``document_id`` so the collection can be distributed by document (Citus:
co-located tables, a document's rows on one shard). Text keys use ``COLLATE "C"``: ordering by
code point, as SQLite's BINARY collation does, whatever the database's locale.
"""

from __future__ import annotations

from psycopg import sql

from ragwright.errors import ConfigError
from ragwright.models import check_collection_name

SCHEMA_VERSION = 1
STAT_SLOTS = 64
SCHEMA_PREFIX = "ragwright_"
#: The schema of what belongs to the whole index rather than a collection (the LLM records).
INDEX_SCHEMA = "ragwright"
#: pgvector's HNSW indexes `vector` columns of at most this many dimensions.
HNSW_MAX_DIMENSION = 2000

_DDL = """
CREATE SCHEMA IF NOT EXISTS {s};

CREATE TABLE IF NOT EXISTS {s}.settings (
    key   text COLLATE "C" PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE IF NOT EXISTS {s}.documents (
    id           text COLLATE "C" PRIMARY KEY,
    source       text COLLATE "C" NOT NULL UNIQUE,
    content      text NOT NULL,
    content_hash text NOT NULL,
    fingerprint  text NOT NULL,
    metadata     jsonb NOT NULL,
    sections     jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS {s}.chunks (
    id          text COLLATE "C" PRIMARY KEY,
    document_id text COLLATE "C" NOT NULL REFERENCES {s}.documents(id) ON DELETE CASCADE,
    idx         integer NOT NULL,
    text        text NOT NULL,
    char_start  integer NOT NULL,
    char_end    integer NOT NULL,
    metadata    jsonb NOT NULL,
    tokens      integer NOT NULL,
    UNIQUE (document_id, idx)
);
CREATE INDEX IF NOT EXISTS chunks_metadata ON {s}.chunks USING gin (metadata);
CREATE INDEX IF NOT EXISTS chunks_metadata_path ON {s}.chunks USING gin (metadata jsonb_path_ops);

CREATE TABLE IF NOT EXISTS {s}.postings (
    term        text COLLATE "C" NOT NULL,
    chunk_id    text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    tf          integer NOT NULL,
    dl          integer NOT NULL,
    PRIMARY KEY (term, chunk_id) INCLUDE (tf, dl)
);
CREATE INDEX IF NOT EXISTS postings_document ON {s}.postings (document_id);

CREATE TABLE IF NOT EXISTS {s}.bm25_stats (
    slot   integer PRIMARY KEY,
    chunks bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);
INSERT INTO {s}.bm25_stats (slot) SELECT generate_series(0, {last_slot})
    ON CONFLICT DO NOTHING;
"""


def schema_name(collection: str) -> str:
    """The PostgreSQL schema of a collection; the name is checked, so it is safe anywhere."""
    return SCHEMA_PREFIX + check_collection_name(collection)


def collection_name(schema: str) -> str | None:
    """The collection a schema holds, or None for a schema that is not a collection's."""
    if not schema.startswith(SCHEMA_PREFIX):
        return None
    name = schema[len(SCHEMA_PREFIX) :]
    try:
        return check_collection_name(name)
    except ConfigError:
        return None


#: Equality filters (``metadata @> {"key": value}``) through an index of paths to values: one
#: posting list per key and value, where the default ``jsonb_ops`` index (kept: it answers
#: ``?``, a key's existence) intersects the key's postings (every chunk having the key) with
#: the value's. At 1M chunks a 1%-selective equality found its matches' addresses in 0.8 ms
#: instead of 17-21 ms (531 index pages read, now 5).
METADATA_PATHS = (
    "CREATE INDEX IF NOT EXISTS chunks_metadata_path ON {s}.chunks "
    "USING gin (metadata jsonb_path_ops)"
)


def ddl(schema: str) -> sql.Composed:
    return sql.SQL(_DDL).format(s=sql.Identifier(schema), last_slot=sql.Literal(STAT_SLOTS - 1))


#: Vectors stay in the chunk's row (pgvector's type defaults to out of line once a row passes
#: ~2 kB: 15% of 100k synthetic 384-d chunks were, and an exact ranking then reads each of
#: those from the TOAST table); the text moves out first, a vector only if the row still
#: does not fit a page.
INLINE_VECTORS = "ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE MAIN"


def vector_ddl(schema: str, dimension: int) -> sql.Composed:
    """The vector column, added once the space (and so the dimension) is known."""
    return sql.SQL(
        "ALTER TABLE {s}.chunks ADD COLUMN IF NOT EXISTS embedding vector({dim}) NOT NULL; "
        + INLINE_VECTORS
    ).format(s=sql.Identifier(schema), dim=sql.Literal(dimension))


def hnsw_ddl(schema: str, m: int, ef_construction: int) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON {s}.chunks "
        "USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef})"
    ).format(s=sql.Identifier(schema), m=sql.Literal(m), ef=sql.Literal(ef_construction))
