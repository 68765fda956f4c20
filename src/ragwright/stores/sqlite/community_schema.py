"""The entity graph's communities and their reports in the SQLite index: an additive feature
block (``feature_communities``), applied after the graph's (`graph_schema`) in one
transaction, like every feature.

- ``graph_community_builds``: the last build's stats (one row: level sizes, singleton and
  largest shares, modularity, settings, the graph version it was built from) as JSON.
- ``graph_communities``: one row per community (level, parent, size) with ``dirty``: a member's
  facts changed since the build.
- ``graph_community_members``: the entity keys of each community.
- ``graph_community_reports``: one report per (community, kind) as JSON with its embedding
  and the hash of its input; ``dirty``: its community's facts changed since it was made.

Derived data, so nothing here is evidence: the triggers mark communities and reports dirty
when a member's mention is added or removed, in the transaction of that write (a document's
delete cascades to its mentions, so the delete itself marks them). Only `graph communities
--rebuild` re-clusters; ingest never does.
"""

from __future__ import annotations

COMMUNITY_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS graph_community_builds (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    summary  TEXT NOT NULL,
    built_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS graph_communities (
    id     INTEGER PRIMARY KEY,
    level  INTEGER NOT NULL,
    parent INTEGER,
    size   INTEGER NOT NULL,
    dirty  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS graph_communities_level ON graph_communities(level, id);
CREATE TABLE IF NOT EXISTS graph_community_members (
    community INTEGER NOT NULL REFERENCES graph_communities(id) ON DELETE CASCADE,
    key       TEXT NOT NULL,
    PRIMARY KEY (community, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_community_members_key ON graph_community_members(key);
CREATE TABLE IF NOT EXISTS graph_community_reports (
    community  INTEGER NOT NULL REFERENCES graph_communities(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    body       TEXT NOT NULL,
    vector     BLOB NOT NULL,
    dirty      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (community, kind)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS graph_community_mention_add AFTER INSERT ON graph_mentions BEGIN
    UPDATE graph_communities SET dirty = 1 WHERE dirty = 0
        AND id IN (SELECT community FROM graph_community_members WHERE key = new.key);
    UPDATE graph_community_reports SET dirty = 1 WHERE dirty = 0
        AND community IN (SELECT community FROM graph_community_members WHERE key = new.key);
END;
CREATE TRIGGER IF NOT EXISTS graph_community_mention_remove AFTER DELETE ON graph_mentions BEGIN
    UPDATE graph_communities SET dirty = 1 WHERE dirty = 0
        AND id IN (SELECT community FROM graph_community_members WHERE key = old.key);
    UPDATE graph_community_reports SET dirty = 1 WHERE dirty = 0
        AND community IN (SELECT community FROM graph_community_members WHERE key = old.key);
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_communities', '1');
COMMIT;
"""

#: ``graph_community_aliases``: the keys merged with a member that are not members themselves
#: (written with the communities, `community_rows.alias_rows`). The graph reads a merge group
#: as one entity under one of its keys, so a mention of another key of the group changes that
#: member's facts: these triggers mark its communities dirty as the members' triggers do.
ALIAS_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS graph_community_aliases (
    community INTEGER NOT NULL REFERENCES graph_communities(id) ON DELETE CASCADE,
    key       TEXT NOT NULL,
    PRIMARY KEY (community, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_community_aliases_key ON graph_community_aliases(key);
CREATE TRIGGER IF NOT EXISTS graph_community_alias_add AFTER INSERT ON graph_mentions BEGIN
    UPDATE graph_communities SET dirty = 1 WHERE dirty = 0
        AND id IN (SELECT community FROM graph_community_aliases WHERE key = new.key);
    UPDATE graph_community_reports SET dirty = 1 WHERE dirty = 0
        AND community IN (SELECT community FROM graph_community_aliases WHERE key = new.key);
END;
CREATE TRIGGER IF NOT EXISTS graph_community_alias_remove AFTER DELETE ON graph_mentions BEGIN
    UPDATE graph_communities SET dirty = 1 WHERE dirty = 0
        AND id IN (SELECT community FROM graph_community_aliases WHERE key = old.key);
    UPDATE graph_community_reports SET dirty = 1 WHERE dirty = 0
        AND community IN (SELECT community FROM graph_community_aliases WHERE key = old.key);
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_community_aliases', '1');
COMMIT;
"""
