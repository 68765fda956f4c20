"""The SQLite store's `CommunityStore`: communities, their build stats and their reports
(`community_schema`). A rebuild replaces every community and report in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

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
from ragwright.stores.sqlite.database import Database

#: Bumped by every write of communities or reports; dirty flags change only with the facts,
#: which bump ``graph_version``: the two together are the community version.
_BUMP = (
    "INSERT INTO meta(key, value) VALUES ('community_version', '1') "
    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)
_VERSION = (
    "SELECT (SELECT value FROM meta WHERE key = 'graph_version'), "
    "(SELECT value FROM meta WHERE key = 'community_version')"
)

_DECISIONS = "SELECT source, target, decision FROM graph_decisions ORDER BY id"
_ALIASES = "graph_community_aliases"


class SQLiteCommunities:
    """The graph's communities and their reports."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def community_version(self) -> str:
        graph, communities = self._db.query(_VERSION)[0]
        return f"{graph or 0}:{communities or 0}"

    def replace_communities(self, build: CommunityBuild) -> None:
        with self._db.transaction() as db:
            tables = ("graph_community_reports", "graph_community_members", _ALIASES)
            for table in tables:
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM graph_communities")
            db.executemany(
                "INSERT INTO graph_communities(id, level, parent, size) VALUES (?, ?, ?, ?)",
                [(c.id, c.level, c.parent, c.size) for c in build.communities],
            )
            db.executemany(
                "INSERT INTO graph_community_members(community, key) VALUES (?, ?)",
                [(c.id, key) for c in build.communities for key in c.members],
            )
            decisions = db.execute(_DECISIONS).fetchall()
            db.executemany(
                f"INSERT INTO {_ALIASES}(community, key) VALUES (?, ?)",
                alias_rows(build.communities, current_merges(decisions)),
            )
            db.execute(
                "INSERT OR REPLACE INTO graph_community_builds(id, summary) VALUES (1, ?)",
                (build_summary(build),),
            )
            db.execute(_BUMP)

    def _has_communities(self) -> bool:
        """False for an index made before communities, opened read-only (not upgraded)."""
        return "graph_community_reports" in self._db.names()

    def community_build(self) -> CommunityBuild | None:
        if not self._has_communities():
            return None
        rows = self._db.query("SELECT summary FROM graph_community_builds WHERE id = 1")
        return summary_build(rows[0][0]) if rows else None

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        if not self._has_communities():
            return []
        where, params = ("WHERE c.level = ?", (level,)) if level is not None else ("", ())
        with self._db.lock, self._db.read_snapshot():
            db = self._db.connection
            rows = db.execute(
                f"SELECT c.id, c.level, c.parent, c.dirty FROM graph_communities c {where} "
                "ORDER BY c.id",
                params,
            ).fetchall()
            members = db.execute(
                "SELECT m.community, m.key FROM graph_community_members m "
                "JOIN graph_communities c ON c.id = m.community "
                f"{where} ORDER BY m.community, m.key",
                params,
            ).fetchall()
        return grouped_communities(rows, members)

    def community_reports(self, kind: str) -> list[StoredReport]:
        if not self._has_communities():
            return []
        rows = self._db.query(
            "SELECT community, input_hash, body, vector, dirty FROM graph_community_reports "
            "WHERE kind = ? ORDER BY community",
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
        written = 0
        with self._db.transaction() as db:
            found = db.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
            stale = int((str(found[0]) if found else "0") != graph_version)
            db.execute(_BUMP)
            for report, vector in reports:
                if not db.execute(
                    "SELECT 1 FROM graph_communities WHERE id = ?", (report.community,)
                ).fetchone():
                    continue  # re-clustered meanwhile: this community is gone
                db.execute(
                    "INSERT OR REPLACE INTO graph_community_reports(community, kind, input_hash, "
                    "body, vector, dirty) VALUES (?, ?, ?, ?, ?, ?)",
                    (report.community, report.kind, report.input_hash, report.to_json(),
                     vector, stale),
                )  # fmt: skip
                written += 1
        return written
