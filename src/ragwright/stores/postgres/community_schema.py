"""Communities and their reports in a PostgreSQL collection: a feature block created (under
the schema lock, in the opening transaction) when a collection made before it is opened, as
the graph's is (`graph_schema`). The same tables as the SQLite store's (`stores.sqlite.
community_schema`), and the same rule: a trigger on the mentions marks the communities of the
entity a mention names (and their reports) dirty in the transaction that adds or removes it,
so a document's delete, which cascades to its mentions, marks them itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.stores.postgres.connections import lock_schema

if TYPE_CHECKING:
    from psycopg import Connection

    from ragwright.stores.postgres.database import SchemaDatabase

COMMUNITY_DDL = """
CREATE TABLE IF NOT EXISTS {s}.graph_community_builds (
    id       integer PRIMARY KEY CHECK (id = 1),
    summary  text NOT NULL,
    built_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS {s}.graph_communities (
    id     integer PRIMARY KEY,
    level  integer NOT NULL,
    parent integer,
    size   integer NOT NULL,
    dirty  boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS graph_communities_level ON {s}.graph_communities (level, id);
CREATE TABLE IF NOT EXISTS {s}.graph_community_members (
    community integer NOT NULL REFERENCES {s}.graph_communities(id) ON DELETE CASCADE,
    key       text COLLATE "C" NOT NULL,
    PRIMARY KEY (community, key)
);
CREATE INDEX IF NOT EXISTS graph_community_members_key ON {s}.graph_community_members (key);
CREATE TABLE IF NOT EXISTS {s}.graph_community_reports (
    community  integer NOT NULL REFERENCES {s}.graph_communities(id) ON DELETE CASCADE,
    kind       text NOT NULL,
    input_hash text NOT NULL,
    body       text NOT NULL,
    vector     bytea NOT NULL,
    dirty      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (community, kind)
);
CREATE OR REPLACE FUNCTION {s}.graph_community_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text := CASE WHEN TG_OP = 'DELETE' THEN OLD.key ELSE NEW.key END;
BEGIN
    UPDATE {s}.graph_communities SET dirty = true WHERE NOT dirty
        AND id IN (SELECT community FROM {s}.graph_community_members WHERE key = changed);
    UPDATE {s}.graph_community_reports SET dirty = true WHERE NOT dirty
        AND community IN (SELECT community FROM {s}.graph_community_members WHERE key = changed);
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER graph_community_mention AFTER INSERT OR DELETE ON {s}.graph_mentions
    FOR EACH ROW EXECUTE FUNCTION {s}.graph_community_mark();
"""


#: ``graph_community_aliases``: the keys merged with a member that are not members themselves
#: (written with the communities, `community_rows.alias_rows`). The graph reads a merge group
#: as one entity under one of its keys, so a mention of another key of the group changes that
#: member's facts: the trigger marks the communities of both.
ALIAS_DDL = """
CREATE TABLE IF NOT EXISTS {s}.graph_community_aliases (
    community integer NOT NULL REFERENCES {s}.graph_communities(id) ON DELETE CASCADE,
    key       text COLLATE "C" NOT NULL,
    PRIMARY KEY (community, key)
);
CREATE INDEX IF NOT EXISTS graph_community_aliases_key ON {s}.graph_community_aliases (key);
CREATE OR REPLACE FUNCTION {s}.graph_community_mark() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text := CASE WHEN TG_OP = 'DELETE' THEN OLD.key ELSE NEW.key END;
BEGIN
    UPDATE {s}.graph_communities SET dirty = true WHERE NOT dirty
        AND id IN (SELECT community FROM {s}.graph_community_members WHERE key = changed
                   UNION ALL
                   SELECT community FROM {s}.graph_community_aliases WHERE key = changed);
    UPDATE {s}.graph_community_reports SET dirty = true WHERE NOT dirty
        AND community IN (SELECT community FROM {s}.graph_community_members WHERE key = changed
                          UNION ALL
                          SELECT community FROM {s}.graph_community_aliases
                          WHERE key = changed);
    RETURN NULL;
END
$$;
"""


def ensure_community_schema(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Add the community tables, then the alias table, to the collection where they are
    missing (in ``conn``'s transaction, under the schema lock, so concurrent openers do it
    once)."""
    tables = (("graph_community_reports", COMMUNITY_DDL), ("graph_community_aliases", ALIAS_DDL))
    for table, ddl in tables:
        found = conn.execute("SELECT to_regclass(%s)", (f"{db.schema}.{table}",)).fetchone()
        if found is not None and found[0] is not None:
            continue
        lock_schema(conn, db.schema)
        conn.execute(db.sql(ddl))
