"""The PostgreSQL store's `CommunityStore` (`community_schema`): the same behaviour as the
SQLite store's, checked by one contract (`ragwright.testing.community_contract`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragwright.models.communities import (
    CommunityBuild,
    CommunityReport,
    StoredCommunity,
    StoredReport,
    build_summary,
    summary_build,
)
from ragwright.stores.community_rows import alias_rows, grouped_communities
from ragwright.stores.graph_snapshot import current_merges
from ragwright.stores.postgres.database import SchemaDatabase

if TYPE_CHECKING:
    from psycopg import Connection


#: Bumped by every write of communities or reports; dirty flags change only with the facts,
#: which bump ``graph_version``: the two together are the community version.
_BUMP = (
    "INSERT INTO {s}.settings VALUES ('community_version', '1') ON CONFLICT (key) "
    "DO UPDATE SET value = ({s}.settings.value::bigint + 1)::text"
)


class PostgresCommunities:
    """The graph's communities and their reports."""

    def __init__(self, db: SchemaDatabase) -> None:
        self._db = db

    def community_version(self) -> str:
        def work(conn: Connection[Any]) -> str:
            graph = self._db.setting(conn, "graph_version") or "0"
            return f"{graph}:{self._db.setting(conn, 'community_version') or '0'}"

        return self._db.run(work, "reading the community version")

    def replace_communities(self, build: CommunityBuild) -> None:
        def work(conn: Connection[Any]) -> None:
            sql = self._db.sql
            # One rebuild at a time: the row lock on the build record orders them.
            conn.execute(sql("LOCK TABLE {s}.graph_community_builds IN EXCLUSIVE MODE"))
            conn.execute(sql("DELETE FROM {s}.graph_communities"))  # cascades to the rest
            with conn.cursor() as cursor:
                cursor.executemany(
                    sql("INSERT INTO {s}.graph_communities(id, level, parent, size) "
                        "VALUES (%s, %s, %s, %s)"),
                    [(c.id, c.level, c.parent, c.size) for c in build.communities],
                )  # fmt: skip
                cursor.executemany(
                    sql("INSERT INTO {s}.graph_community_members(community, key) VALUES (%s, %s)"),
                    [(c.id, key) for c in build.communities for key in c.members],
                )
                decisions = conn.execute(
                    sql("SELECT source, target, decision FROM {s}.graph_decisions ORDER BY id")
                ).fetchall()
                cursor.executemany(
                    sql("INSERT INTO {s}.graph_community_aliases(community, key) "
                        "VALUES (%s, %s)"),
                    alias_rows(build.communities, current_merges(decisions)),
                )  # fmt: skip
            conn.execute(
                sql("INSERT INTO {s}.graph_community_builds(id, summary) VALUES (1, %s) "
                    "ON CONFLICT (id) DO UPDATE SET summary = excluded.summary, built_at = now()"),
                (build_summary(build),),
            )  # fmt: skip
            conn.execute(sql(_BUMP))

        self._db.run(work, "storing communities")

    def community_build(self) -> CommunityBuild | None:
        rows = self._db.query("SELECT summary FROM {s}.graph_community_builds WHERE id = 1")
        return summary_build(rows[0][0]) if rows else None

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        where = "WHERE c.level = %s" if level is not None else ""
        params = (level,) if level is not None else ()

        def work(conn: Connection[Any]) -> list[StoredCommunity]:
            rows = conn.execute(
                self._db.sql(
                    "SELECT c.id, c.level, c.parent, c.dirty FROM {s}.graph_communities c "
                    f"{where} ORDER BY c.id"
                ),
                params,
            ).fetchall()
            members = conn.execute(
                self._db.sql(
                    "SELECT m.community, m.key FROM {s}.graph_community_members m "
                    "JOIN {s}.graph_communities c ON c.id = m.community "
                    f"{where} ORDER BY m.community, m.key"
                ),
                params,
            ).fetchall()
            return grouped_communities(rows, members)

        return self._db.run(work, "reading communities")

    def community_reports(self, kind: str) -> list[StoredReport]:
        rows = self._db.query(
            "SELECT community, input_hash, body, vector, dirty FROM {s}.graph_community_reports "
            "WHERE kind = %s ORDER BY community",
            (kind,),
        )
        return [
            StoredReport(
                CommunityReport.from_json(int(c), kind, h, body), bytes(vector), bool(dirty)
            )
            for c, h, body, vector, dirty in rows
        ]

    def write_reports(
        self, reports: Sequence[tuple[CommunityReport, bytes]], graph_version: str
    ) -> int:
        if not reports:
            return 0

        def work(conn: Connection[Any]) -> int:
            current = self._db.setting(conn, "graph_version") or "0"
            stale = current != graph_version
            conn.execute(self._db.sql(_BUMP))
            written = 0
            for report, vector in reports:
                cursor = conn.execute(
                    self._db.sql(
                        "INSERT INTO {s}.graph_community_reports(community, kind, input_hash, "
                        "body, vector, dirty) SELECT %s, %s, %s, %s, %s, %s "
                        "WHERE EXISTS (SELECT 1 FROM {s}.graph_communities WHERE id = %s) "
                        "ON CONFLICT (community, kind) DO UPDATE SET input_hash = "
                        "excluded.input_hash, body = excluded.body, vector = excluded.vector, "
                        "dirty = excluded.dirty"
                    ),
                    (report.community, report.kind, report.input_hash, report.to_json(),
                     vector, stale, report.community),
                )  # fmt: skip
                written += cursor.rowcount
            return written

        return self._db.run(work, "storing community reports")
