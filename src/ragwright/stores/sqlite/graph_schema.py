"""The entity graph's tables in the SQLite index: a feature block of its own, applied after
the core schema (`schema.ddl`) with ``CREATE … IF NOT EXISTS`` in one transaction, so opening
an index made before the graph existed adds these tables and nothing else changes (no schema
version bump: older rows are all still valid).

Evidence (what extractors found; each row belongs to one chunk, deleted with it):

- ``graph_extractions``: one row per chunk whose facts are stored, naming the extractor (a
  chunk with no entities has a row too: it is known to be extracted).
- ``graph_mentions``: an entity named at an exact span of a chunk's text.
- ``graph_relations``: evidence in a chunk that two of its entities are related, weighted in
  millionths (integers, so removing evidence takes off exactly what adding it put on).

Aggregates (kept exact by triggers on the evidence, in the same transaction as every insert
and every cascade delete; a user never writes them):

- ``graph_entities``: one row per entity key with its mention count; it disappears with its
  last mention. ``linked`` says its synonym links have been computed.
- ``graph_entity_forms``: each surface form and type an entity is mentioned by, and how often.
- ``graph_edges``: one row per related pair (keys in order) with its evidence count and summed
  weight (capped when read: `EDGE_WEIGHT_CAP`).

Resolution:

- ``graph_synonyms``: soft links between near-duplicate entities (stage 2), deleted with
  either entity.
- ``graph_decisions``: the user's merges and unmerges, in order; never deleted (a record).

``meta.graph_version`` counts fact changes (a trigger on ``graph_extractions``); merges and
synonym links bump it too, so a snapshot cached by version is never stale.
"""

from __future__ import annotations

from ragwright.stores.graph_facts import stated_ends
from ragwright.stores.sqlite.database import Database

GRAPH_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS graph_extractions (
    chunk_rowid INTEGER PRIMARY KEY REFERENCES chunks(rowid) ON DELETE CASCADE,
    extractor   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_extractions_extractor ON graph_extractions(extractor);

CREATE TABLE IF NOT EXISTS graph_mentions (
    chunk_rowid INTEGER NOT NULL REFERENCES chunks(rowid) ON DELETE CASCADE,
    extractor   TEXT NOT NULL,
    char_start  INTEGER NOT NULL,
    char_end    INTEGER NOT NULL,
    text        TEXT NOT NULL,
    key         TEXT NOT NULL,
    label       TEXT NOT NULL,
    PRIMARY KEY (chunk_rowid, char_start, char_end, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_mentions_key ON graph_mentions(key);

CREATE TABLE IF NOT EXISTS graph_relations (
    chunk_rowid INTEGER NOT NULL REFERENCES chunks(rowid) ON DELETE CASCADE,
    extractor   TEXT NOT NULL,
    source      TEXT NOT NULL,
    target      TEXT NOT NULL,
    label       TEXT NOT NULL,
    weight      INTEGER NOT NULL CHECK (weight > 0)
);
CREATE INDEX IF NOT EXISTS graph_relations_chunk ON graph_relations(chunk_rowid);

CREATE TABLE IF NOT EXISTS graph_entities (
    id       INTEGER PRIMARY KEY,
    key      TEXT NOT NULL UNIQUE,
    mentions INTEGER NOT NULL,
    linked   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS graph_entity_forms (
    key      TEXT NOT NULL REFERENCES graph_entities(key) ON DELETE CASCADE,
    form     TEXT NOT NULL,
    label    TEXT NOT NULL,
    mentions INTEGER NOT NULL,
    PRIMARY KEY (key, form, label)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS graph_edges (
    source    TEXT NOT NULL,
    target    TEXT NOT NULL,
    relations INTEGER NOT NULL,
    weight    INTEGER NOT NULL,
    PRIMARY KEY (source, target)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_edges_target ON graph_edges(target);

CREATE TABLE IF NOT EXISTS graph_synonyms (
    source TEXT NOT NULL REFERENCES graph_entities(key) ON DELETE CASCADE,
    target TEXT NOT NULL REFERENCES graph_entities(key) ON DELETE CASCADE,
    score  REAL NOT NULL,
    PRIMARY KEY (source, target)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_synonyms_target ON graph_synonyms(target);

CREATE TABLE IF NOT EXISTS graph_decisions (
    id         INTEGER PRIMARY KEY,
    source     TEXT NOT NULL,
    target     TEXT NOT NULL,
    decision   TEXT NOT NULL CHECK (decision IN ('merge', 'unmerge')),
    decided_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX IF NOT EXISTS graph_decisions_pair ON graph_decisions(source, target, id);

CREATE TRIGGER IF NOT EXISTS graph_mention_add AFTER INSERT ON graph_mentions BEGIN
    INSERT INTO graph_entities(key, mentions) VALUES (new.key, 1)
        ON CONFLICT(key) DO UPDATE SET mentions = mentions + 1;
    INSERT INTO graph_entity_forms(key, form, label, mentions)
        VALUES (new.key, new.text, new.label, 1)
        ON CONFLICT(key, form, label) DO UPDATE SET mentions = mentions + 1;
END;

CREATE TRIGGER IF NOT EXISTS graph_mention_remove AFTER DELETE ON graph_mentions BEGIN
    UPDATE graph_entity_forms SET mentions = mentions - 1
        WHERE key = old.key AND form = old.text AND label = old.label;
    DELETE FROM graph_entity_forms
        WHERE key = old.key AND form = old.text AND label = old.label AND mentions <= 0;
    UPDATE graph_entities SET mentions = mentions - 1 WHERE key = old.key;
    DELETE FROM graph_entities WHERE key = old.key AND mentions <= 0;
END;

CREATE TRIGGER IF NOT EXISTS graph_relation_add AFTER INSERT ON graph_relations BEGIN
    INSERT INTO graph_edges(source, target, relations, weight)
        VALUES (new.source, new.target, 1, new.weight)
        ON CONFLICT(source, target) DO UPDATE
        SET relations = relations + 1, weight = weight + excluded.weight;
END;

CREATE TRIGGER IF NOT EXISTS graph_relation_remove AFTER DELETE ON graph_relations BEGIN
    UPDATE graph_edges SET relations = relations - 1, weight = weight - old.weight
        WHERE source = old.source AND target = old.target;
    DELETE FROM graph_edges
        WHERE source = old.source AND target = old.target AND relations <= 0;
END;

CREATE TRIGGER IF NOT EXISTS graph_version_add AFTER INSERT ON graph_extractions BEGIN
    INSERT INTO meta(key, value) VALUES ('graph_version', '1')
        ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;

CREATE TRIGGER IF NOT EXISTS graph_version_remove AFTER DELETE ON graph_extractions BEGIN
    INSERT INTO meta(key, value) VALUES ('graph_version', '1')
        ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_graph', '1');
COMMIT;
"""

#: Bumps the graph version for what the triggers do not see (merges, synonym links).
BUMP_GRAPH_VERSION = (
    "INSERT INTO meta(key, value) VALUES ('graph_version', '1') "
    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)

#: Log entries kept: a reader further behind than this reads the whole graph again anyway.
GRAPH_CHANGES_KEPT = 20_000

#: Feature "graph_changes" (additive, after the graph): a log of what changed the graph, in
#: order, written by triggers in the writer's transaction, so a cached snapshot is brought up
#: to date by replaying it (`graph_refresh`) instead of reading every fact again. A row names
#: a chunk row whose facts changed (written, deleted, or re-keyed by a move), or an entity
#: whose synonym links changed; one naming neither is a merge decision (read everything).
#: Entries older than the newest `GRAPH_CHANGES_KEPT` are pruned as new ones come in; a
#: reader that finds its place pruned reads the whole graph.
GRAPH_CHANGES_DDL = f"""
BEGIN;
CREATE TABLE IF NOT EXISTS graph_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_rowid INTEGER,
    key         TEXT
);
CREATE TRIGGER IF NOT EXISTS graph_changes_facts_add AFTER INSERT ON graph_extractions BEGIN
    INSERT INTO graph_changes(chunk_rowid) VALUES (new.chunk_rowid);
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_facts_remove AFTER DELETE ON graph_extractions
BEGIN
    INSERT INTO graph_changes(chunk_rowid) VALUES (old.chunk_rowid);
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_moved AFTER UPDATE OF id ON chunks
WHEN old.id != new.id AND EXISTS (SELECT 1 FROM graph_extractions WHERE chunk_rowid = new.rowid)
BEGIN
    INSERT INTO graph_changes(chunk_rowid) VALUES (new.rowid);
    INSERT INTO meta(key, value) VALUES ('graph_version', '1')
        ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_synonym_add AFTER INSERT ON graph_synonyms BEGIN
    INSERT INTO graph_changes(key) VALUES (new.source), (new.target);
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_synonym_remove AFTER DELETE ON graph_synonyms BEGIN
    INSERT INTO graph_changes(key) VALUES (old.source), (old.target);
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_decision AFTER INSERT ON graph_decisions BEGIN
    INSERT INTO graph_changes(chunk_rowid, key) VALUES (NULL, NULL);
END;
CREATE TRIGGER IF NOT EXISTS graph_changes_prune AFTER INSERT ON graph_changes
WHEN new.seq % 1024 = 0 BEGIN
    DELETE FROM graph_changes WHERE seq <= new.seq - {GRAPH_CHANGES_KEPT};
END;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_graph_changes', '1');
COMMIT;
"""

#: Feature "graph_fact_vectors" (additive, after the graph): the typed facts' vectors, one row
#: per fact a chunk states, in the space named by ``space`` (`stores.fact_vectors.space_key`).
#: A row hangs off its chunk's extraction, so a chunk's delete, or its facts' replacement,
#: takes its fact vectors in the same transaction (ON DELETE CASCADE). ``text`` is what was
#: embedded ("subject predicate object"). ``id`` only grows: with the row count it makes the
#: version readers cache the vectors by.
FACT_VECTORS_DDL = """
BEGIN;
CREATE TABLE IF NOT EXISTS graph_fact_vectors (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_rowid INTEGER NOT NULL
                REFERENCES graph_extractions(chunk_rowid) ON DELETE CASCADE,
    source      TEXT NOT NULL,
    label       TEXT NOT NULL,
    target      TEXT NOT NULL,
    text        TEXT NOT NULL,
    space       TEXT NOT NULL,
    vector      BLOB NOT NULL,
    UNIQUE (chunk_rowid, source, label, target)
);
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_graph_fact_vectors', '1');
COMMIT;
"""


#: The direction of a typed fact whose subject is the later key (relations are stored in key
#: order: `stores.graph_facts`); rows written before it read as stated in key order.
RELATION_DIRECTION_DDL = """
BEGIN;
ALTER TABLE graph_relations ADD COLUMN reversed INTEGER NOT NULL DEFAULT 0;
INSERT OR REPLACE INTO meta(key, value) VALUES ('feature_relation_direction', '1');
COMMIT;
"""


def relation_ends(db: Database, table: str) -> str:
    """SQL for the subject and object of ``table``'s relations as their chunks state them; in
    key order in an index opened read-only before it had the direction (not added then)."""
    if db.query("SELECT 1 FROM meta WHERE key = 'feature_relation_direction'"):
        return stated_ends(table)
    return f"{table}.source, {table}.target"
