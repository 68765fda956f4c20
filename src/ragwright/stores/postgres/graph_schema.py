"""The entity graph's tables in a PostgreSQL collection: a feature block of its own, created
(under the schema lock, in the opening transaction) when a collection made before the graph
existed is opened, so the upgrade is additive and atomic; the schema version is untouched.

Only the evidence is stored, as in the SQLite store, each row belonging to one chunk (foreign
key, ON DELETE CASCADE, so a document's replace or delete takes its facts in the same
transaction). Entities and edges are *derived on read* here (GROUP BY over the evidence,
exact by construction): materializing them would make concurrent writers of the same entity
queue on, or deadlock over, its aggregate row, and PostgreSQL groups fast enough that the
snapshot, cached by graph version, is the only reader that scans.

- ``graph_extractions``, ``graph_mentions``, ``graph_relations``: the evidence (weights in
  millionths, like SQLite's), each with its chunk's ``document_id`` (distribution column);
- ``graph_synonyms``: soft links between keys (read only where both keys are entities now);
  ``graph_linked``: the keys whose links were computed;
- ``graph_decisions``: the user's merges and unmerges, in order;
- ``settings.graph_version``: bumped in the transaction of every fact change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.connections import has_column, lock_schema

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

GRAPH_DDL = """
CREATE TABLE IF NOT EXISTS {s}.graph_extractions (
    chunk_id    text COLLATE "C" PRIMARY KEY REFERENCES {s}.chunks(id) ON DELETE CASCADE,
    document_id text COLLATE "C" NOT NULL,
    extractor   text COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_extractions_document ON {s}.graph_extractions (document_id);

CREATE TABLE IF NOT EXISTS {s}.graph_mentions (
    chunk_id    text COLLATE "C" NOT NULL REFERENCES {s}.chunks(id) ON DELETE CASCADE,
    document_id text COLLATE "C" NOT NULL,
    extractor   text COLLATE "C" NOT NULL,
    char_start  integer NOT NULL,
    char_end    integer NOT NULL,
    text        text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    label       text COLLATE "C" NOT NULL,
    PRIMARY KEY (chunk_id, char_start, char_end, key)
);
CREATE INDEX IF NOT EXISTS graph_mentions_key ON {s}.graph_mentions (key);

CREATE TABLE IF NOT EXISTS {s}.graph_relations (
    chunk_id    text COLLATE "C" NOT NULL REFERENCES {s}.chunks(id) ON DELETE CASCADE,
    document_id text COLLATE "C" NOT NULL,
    extractor   text COLLATE "C" NOT NULL,
    source      text COLLATE "C" NOT NULL,
    target      text COLLATE "C" NOT NULL,
    label       text COLLATE "C" NOT NULL,
    weight      bigint NOT NULL CHECK (weight > 0),
    reversed    smallint NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS graph_relations_chunk ON {s}.graph_relations (chunk_id);
CREATE INDEX IF NOT EXISTS graph_relations_source ON {s}.graph_relations (source);
CREATE INDEX IF NOT EXISTS graph_relations_target ON {s}.graph_relations (target);

CREATE TABLE IF NOT EXISTS {s}.graph_synonyms (
    source text COLLATE "C" NOT NULL,
    target text COLLATE "C" NOT NULL,
    score  double precision NOT NULL,
    PRIMARY KEY (source, target)
);
CREATE INDEX IF NOT EXISTS graph_synonyms_target ON {s}.graph_synonyms (target);

CREATE TABLE IF NOT EXISTS {s}.graph_linked (
    key text COLLATE "C" PRIMARY KEY
);

CREATE TABLE IF NOT EXISTS {s}.graph_decisions (
    id         bigserial PRIMARY KEY,
    source     text COLLATE "C" NOT NULL,
    target     text COLLATE "C" NOT NULL,
    decision   text NOT NULL CHECK (decision IN ('merge', 'unmerge')),
    decided_at timestamptz NOT NULL DEFAULT now()
);
"""

BUMP_GRAPH_VERSION = (
    "INSERT INTO {s}.settings VALUES ('graph_version', '1') ON CONFLICT (key) "
    "DO UPDATE SET value = ({s}.settings.value::bigint + 1)::text"
)


def ensure_graph_schema(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the graph's tables to the collection if it has none yet (in ``conn``'s
    transaction, under the schema lock, so concurrent openers do it once)."""
    _ensure_table(db, conn, "graph_decisions", GRAPH_DDL)


#: Versions of changes kept: a reader further behind reads the whole graph again anyway.
GRAPH_CHANGES_KEPT = 20_000

#: The graph's change log (added beside the graph's tables, like them, once): what changed
#: the graph, logged by triggers as it happens (a chunk whose facts were written or deleted,
#: a key whose synonym links changed; neither: a merge decision) and stamped, by a trigger on
#: the settings row, with the graph version its transaction bumps to (`BUMP_GRAPH_VERSION`,
#: last in every transaction that changes the graph), so any writer's changes are stamped.
#: The bump holds the version's row until commit, so versions follow commit order: a reader
#: that sees version V sees every change stamped V or less. A row never stamped (its
#: transaction changed nothing the snapshot shows) is pruned with those older than the
#: newest `GRAPH_CHANGES_KEPT` versions.
GRAPH_CHANGES_DDL = """
CREATE TABLE IF NOT EXISTS {s}.graph_changes (
    version  bigint,
    txid     bigint NOT NULL DEFAULT txid_current(),
    chunk_id text COLLATE "C",
    key      text COLLATE "C"
);
CREATE INDEX IF NOT EXISTS graph_changes_version ON {s}.graph_changes (version);
CREATE INDEX IF NOT EXISTS graph_changes_pending ON {s}.graph_changes (txid)
    WHERE version IS NULL;
CREATE INDEX IF NOT EXISTS graph_relations_pair ON {s}.graph_relations (source, target);

CREATE OR REPLACE FUNCTION {s}.graph_changes_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO {s}.graph_changes (chunk_id) VALUES (OLD.chunk_id);
    ELSE
        INSERT INTO {s}.graph_changes (chunk_id) VALUES (NEW.chunk_id);
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION {s}.graph_changes_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO {s}.graph_changes (key) VALUES (OLD.source), (OLD.target);
    ELSE
        INSERT INTO {s}.graph_changes (key) VALUES (NEW.source), (NEW.target);
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION {s}.graph_changes_decision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {s}.graph_changes (chunk_id, key) VALUES (NULL, NULL);
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION {s}.graph_changes_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {s}.graph_changes SET version = NEW.value::bigint
        WHERE version IS NULL AND txid = txid_current();
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER graph_changes_stamp AFTER INSERT OR UPDATE ON {s}.settings
    FOR EACH ROW WHEN (NEW.key = 'graph_version') EXECUTE FUNCTION {s}.graph_changes_stamp();
CREATE OR REPLACE TRIGGER graph_changes_facts AFTER INSERT OR DELETE ON {s}.graph_extractions
    FOR EACH ROW EXECUTE FUNCTION {s}.graph_changes_chunk();
CREATE OR REPLACE TRIGGER graph_changes_synonyms AFTER INSERT OR DELETE ON {s}.graph_synonyms
    FOR EACH ROW EXECUTE FUNCTION {s}.graph_changes_keys();
CREATE OR REPLACE TRIGGER graph_changes_decisions AFTER INSERT ON {s}.graph_decisions
    FOR EACH ROW EXECUTE FUNCTION {s}.graph_changes_decision();
"""

PRUNE_GRAPH_CHANGES = (
    "DELETE FROM {s}.graph_changes WHERE version <= %s OR "
    "(version IS NULL AND txid <> txid_current())"
)


def ensure_graph_changes(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the change log to a collection's graph that has none yet (as
    `ensure_graph_schema`)."""
    _ensure_table(db, conn, "graph_changes", GRAPH_CHANGES_DDL)


#: The direction of a typed fact whose subject is the later key (relations are stored in key
#: order: `stores.graph_facts`), for a graph made before it; its rows read as in key order.
RELATION_DIRECTION_DDL = (
    "ALTER TABLE {s}.graph_relations ADD COLUMN IF NOT EXISTS reversed smallint NOT NULL DEFAULT 0"
)


def ensure_relation_direction(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the relations' direction column to a graph made without it (as
    `ensure_graph_schema`: looked for without the lock first)."""
    if not has_column(conn, db.schema, "graph_relations", "reversed"):
        lock_schema(conn, db.schema)
        conn.execute(db.sql(RELATION_DIRECTION_DDL))


def _ensure_table(db: SchemaDatabase, conn: Connection[Any], table: str, ddl: str) -> None:
    """Run ``ddl`` under the schema lock unless ``table`` exists already (checked first
    without the lock: an existing collection's open takes none)."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.{table}",)).fetchone()
    if found is not None and found[0] is not None:
        return
    lock_schema(conn, db.schema)
    conn.execute(db.sql(ddl))


#: The typed facts' vectors (added beside the graph's tables, like them, once): one row per
#: fact a chunk states, in the space named by ``space`` (`stores.fact_vectors.space_key`),
#: hanging off the chunk's extraction, so the chunk's delete or its facts' replacement takes
#: them in that transaction (ON DELETE CASCADE). float32 bytes as in SQLite: linking reads
#: them all, so pgvector's index would not be used. ``id`` only grows (the version).
FACT_VECTORS_DDL = """
CREATE TABLE IF NOT EXISTS {s}.graph_fact_vectors (
    id          bigserial PRIMARY KEY,
    chunk_id    text COLLATE "C" NOT NULL
                REFERENCES {s}.graph_extractions(chunk_id) ON DELETE CASCADE,
    document_id text COLLATE "C" NOT NULL,
    source      text COLLATE "C" NOT NULL,
    label       text COLLATE "C" NOT NULL,
    target      text COLLATE "C" NOT NULL,
    text        text NOT NULL,
    space       text COLLATE "C" NOT NULL,
    vector      bytea NOT NULL,
    UNIQUE (chunk_id, source, label, target)
);
"""


def ensure_fact_vectors(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the fact vectors' table to a collection's graph that has none yet (as
    `ensure_graph_schema`)."""
    _ensure_table(db, conn, "graph_fact_vectors", FACT_VECTORS_DDL)
