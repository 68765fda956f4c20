"""Entity resolution in the PostgreSQL store: synonym links for keys not linked yet (stale
links and marks of vanished keys cleared first; every key again when the linker's rules
changed, `LINKER_VERSION` in the ``graph_linker`` setting), and recorded merges and unmerges.
One linker at a time per collection (an advisory lock), so two never link the same keys
twice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragwright.errors import ConfigError, UnknownEntity
from ragwright.graph.synonyms import LINKER_VERSION, dominant_types, synonym_links
from ragwright.stores.graph_snapshot import current_merges
from ragwright.stores.postgres.database import SchemaDatabase
from ragwright.stores.postgres.graph_reads import stored_key
from ragwright.stores.postgres.graph_writes import bump_graph_version

if TYPE_CHECKING:
    from psycopg import Connection

_LINK_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))"


class PostgresEntityResolution:
    """Linking and merging the graph's entities."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db

    def link_synonyms(self) -> int:
        def work(conn: Connection[Any]) -> int:
            sql = self._db.sql
            conn.execute(_LINK_LOCK, (self._db.schema,))
            _relink_after_new_rules(self._db, conn)
            alive = "(SELECT DISTINCT key FROM {s}.graph_mentions)"
            conn.execute(sql(f"DELETE FROM {{s}}.graph_linked WHERE key NOT IN {alive}"))
            conn.execute(
                sql(f"DELETE FROM {{s}}.graph_synonyms WHERE source NOT IN {alive} "
                    f"OR target NOT IN {alive}")
            )  # fmt: skip
            every = [r[0] for r in conn.execute(sql(f"SELECT key FROM {alive} k ORDER BY key"))]
            new = [
                r[0]
                for r in conn.execute(
                    sql(f"SELECT key FROM {alive} k WHERE key NOT IN "
                        "(SELECT key FROM {s}.graph_linked) ORDER BY key")
                )
            ]  # fmt: skip
            if not new:
                return 0
            refused = _unmerged(self._db, conn)
            types = dominant_types(
                conn.execute(
                    sql("SELECT key, label, count(*) FROM {s}.graph_mentions GROUP BY key, label")
                )
            )

            def documents(key: str) -> frozenset[str]:
                found = conn.execute(
                    sql("SELECT DISTINCT document_id FROM {s}.graph_mentions WHERE key = %s"),
                    (key,),
                )
                return frozenset(row[0] for row in found)

            made = synonym_links(new, every, types=types, documents=documents)
            links = [link for link in made if link[:2] not in refused]
            added = 0
            with conn.cursor() as cursor:
                for link in links:
                    cursor.execute(
                        sql("INSERT INTO {s}.graph_synonyms VALUES (%s, %s, %s) "
                            "ON CONFLICT DO NOTHING"),
                        link,
                    )  # fmt: skip
                    added += cursor.rowcount
                cursor.executemany(
                    sql("INSERT INTO {s}.graph_linked VALUES (%s) ON CONFLICT DO NOTHING"),
                    [(key,) for key in new],
                )
            bump_graph_version(self._db, conn)
            return added

        return self._db.run(work, "linking synonyms")

    def merge_entities(self, first: str, second: str) -> None:
        def work(conn: Connection[Any]) -> None:
            source, target = _pair(self._db, conn, first, second)
            conn.execute(
                self._db.sql("INSERT INTO {s}.graph_decisions (source, target, decision) "
                             "VALUES (%s, %s, 'merge')"),
                (source, target),
            )  # fmt: skip
            bump_graph_version(self._db, conn)

        self._db.run(work, "merging entities")

    def unmerge_entities(self, first: str, second: str) -> bool:
        def work(conn: Connection[Any]) -> bool:
            sql = self._db.sql
            source, target = _pair(self._db, conn, first, second)
            merged = (source, target) in current_merges(
                conn.execute(
                    sql("SELECT source, target, decision FROM {s}.graph_decisions "
                        "WHERE source = %s AND target = %s ORDER BY id"),
                    (source, target),
                ).fetchall()
            )  # fmt: skip
            linked = conn.execute(
                sql("DELETE FROM {s}.graph_synonyms WHERE source = %s AND target = %s"),
                (source, target),
            ).rowcount
            conn.execute(
                sql("INSERT INTO {s}.graph_decisions (source, target, decision) "
                    "VALUES (%s, %s, 'unmerge')"),
                (source, target),
            )  # fmt: skip
            bump_graph_version(self._db, conn)
            return merged or linked > 0

        return self._db.run(work, "unmerging entities")


def _relink_after_new_rules(db: SchemaDatabase, conn: Connection[Any]) -> None:
    """Links made by another linker version (or before versions were recorded) are dropped
    and every key is linked again: they follow rules that changed."""
    row = conn.execute(
        db.sql("SELECT value FROM {s}.settings WHERE key = 'graph_linker'")
    ).fetchone()
    if row is not None and row[0] == str(LINKER_VERSION):
        return
    conn.execute(db.sql("DELETE FROM {s}.graph_synonyms"))
    conn.execute(db.sql("DELETE FROM {s}.graph_linked"))
    conn.execute(
        db.sql("INSERT INTO {s}.settings VALUES ('graph_linker', %s) "
               "ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
        (str(LINKER_VERSION),),
    )  # fmt: skip


def _pair(db: SchemaDatabase, conn: Connection[Any], first: str, second: str) -> tuple[str, str]:
    keys = []
    for name in (first, second):
        key = stored_key(db, conn, name)
        if key is None:
            raise UnknownEntity(f"no entity {name!r} in the graph (see `ragwright graph stats`)")
        keys.append(key)
    if keys[0] == keys[1]:
        raise ConfigError(f"{first!r} and {second!r} name the same entity already")
    low, high = sorted(keys)
    return low, high


def _unmerged(db: SchemaDatabase, conn: Connection[Any]) -> set[tuple[str, str]]:
    latest: dict[tuple[str, str], str] = {}
    for source, target, decision in conn.execute(
        db.sql("SELECT source, target, decision FROM {s}.graph_decisions ORDER BY id")
    ):
        latest[(source, target)] = decision
    return {pair for pair, decision in latest.items() if decision == "unmerge"}
