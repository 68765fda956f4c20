"""Entity resolution in the SQLite store: synonym links (stage 2) computed for entities that
have none computed yet (all of them again when the linker's rules changed, `LINKER_VERSION`
in ``meta.graph_linker``), and a user's merges and unmerges, recorded in order."""

from __future__ import annotations

import sqlite3

from ragwright.errors import ConfigError, UnknownEntity
from ragwright.graph.synonyms import LINKER_VERSION, dominant_types, synonym_links
from ragwright.stores.sqlite.database import Database
from ragwright.stores.sqlite.graph_reads import stored_key
from ragwright.stores.sqlite.graph_schema import BUMP_GRAPH_VERSION


class SQLiteEntityResolution:
    """Linking and merging the graph's entities."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def link_synonyms(self) -> int:
        with self._db.transaction() as db:
            _relink_after_new_rules(db)
            new = [r[0] for r in db.execute("SELECT key FROM graph_entities WHERE linked = 0")]
            if not new:
                return 0
            every = [r[0] for r in db.execute("SELECT key FROM graph_entities")]
            refused = _unmerged(db)
            types = dominant_types(
                db.execute("SELECT key, label, mentions FROM graph_entity_forms")
            )

            def documents(key: str) -> frozenset[str]:
                return frozenset(
                    row[0]
                    for row in db.execute(
                        "SELECT DISTINCT c.document_id FROM graph_mentions m "
                        "JOIN chunks c ON c.rowid = m.chunk_rowid WHERE m.key = ?",
                        (key,),
                    )
                )

            made = synonym_links(new, every, types=types, documents=documents)
            links = [link for link in made if link[:2] not in refused]
            # rowcount counts the links inserted, not what triggers wrote for them
            added = db.executemany(
                "INSERT OR IGNORE INTO graph_synonyms(source, target, score) VALUES (?, ?, ?)",
                links,
            ).rowcount
            db.execute("UPDATE graph_entities SET linked = 1 WHERE linked = 0")
            db.execute(BUMP_GRAPH_VERSION)
            return added

    def merge_entities(self, first: str, second: str) -> None:
        with self._db.transaction() as db:
            source, target = _pair(db, first, second)
            db.execute(
                "INSERT INTO graph_decisions(source, target, decision) VALUES (?, ?, 'merge')",
                (source, target),
            )
            db.execute(BUMP_GRAPH_VERSION)

    def unmerge_entities(self, first: str, second: str) -> bool:
        with self._db.transaction() as db:
            source, target = _pair(db, first, second)
            latest = db.execute(
                "SELECT decision FROM graph_decisions WHERE source = ? AND target = ? "
                "ORDER BY id DESC LIMIT 1",
                (source, target),
            ).fetchone()
            linked = db.execute(
                "DELETE FROM graph_synonyms WHERE source = ? AND target = ?", (source, target)
            ).rowcount
            db.execute(
                "INSERT INTO graph_decisions(source, target, decision) VALUES (?, ?, 'unmerge')",
                (source, target),
            )
            db.execute(BUMP_GRAPH_VERSION)
            return bool(linked) or (latest is not None and latest[0] == "merge")


def _relink_after_new_rules(db: sqlite3.Connection) -> None:
    """Links made by another linker version (or before versions were recorded) are dropped
    and every entity is linked again: they follow rules that changed."""
    row = db.execute("SELECT value FROM meta WHERE key = 'graph_linker'").fetchone()
    if row is not None and row[0] == str(LINKER_VERSION):
        return
    db.execute("DELETE FROM graph_synonyms")
    db.execute("UPDATE graph_entities SET linked = 0 WHERE linked = 1")
    db.execute(
        "INSERT INTO meta(key, value) VALUES ('graph_linker', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(LINKER_VERSION),),
    )


def _pair(db: sqlite3.Connection, first: str, second: str) -> tuple[str, str]:
    """The stored keys of two entities, in order; `UnknownEntity` for one that is not there."""
    keys = []
    for name in (first, second):
        key = stored_key(db, name)
        if key is None:
            raise UnknownEntity(f"no entity {name!r} in the graph (see `ragwright graph stats`)")
        keys.append(key)
    if keys[0] == keys[1]:
        raise ConfigError(f"{first!r} and {second!r} name the same entity already")
    low, high = sorted(keys)
    return low, high


def _unmerged(db: sqlite3.Connection) -> set[tuple[str, str]]:
    """Pairs whose latest decision is an unmerge: never linked again automatically."""
    latest: dict[tuple[str, str], str] = {}
    for source, target, decision in db.execute(
        "SELECT source, target, decision FROM graph_decisions ORDER BY id"
    ):
        latest[(source, target)] = decision
    return {pair for pair, decision in latest.items() if decision == "unmerge"}
