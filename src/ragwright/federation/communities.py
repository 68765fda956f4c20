"""Communities in a federation: each member's own, under its name.

A community is a cluster of one index's entity graph, and each member has its own graph (so a
federation gives no graph context either): there is no community spanning members. A listing
therefore gives every member's communities, member by member, each under the member's name;
a member without communities is left out with a warning, as a failed member is from a search
(in strict mode the listing fails), and when no member has any, the listing is the members'
own `GraphNotBuilt`. Community ids are numbered per index, so the same id in two members
names two unrelated communities: one community is asked for in a named member.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragwright.index import Index
from ragwright.models.communities import CommunityBuild, StoredCommunity, StoredReport


@dataclass(frozen=True, slots=True)
class MemberCommunities:
    """One member's community build, its communities (of the level asked for, or all) and
    their extractive reports by community id."""

    index: str
    build: CommunityBuild
    communities: tuple[StoredCommunity, ...]
    reports: dict[int, StoredReport]


@dataclass(frozen=True, slots=True)
class FederatedCommunities:
    """The members' communities, in member order, and why any member is left out."""

    members: tuple[MemberCommunities, ...]
    warnings: tuple[str, ...]


def member_communities(name: str, index: Index, level: int | None) -> MemberCommunities:
    """``index``'s communities of ``level`` (all when None); `GraphNotBuilt` without any."""
    workflow = index.community_workflow()
    build = workflow.checked_build()
    reports = {stored.report.community: stored for stored in workflow.extractive_reports()}
    return MemberCommunities(name, build, tuple(workflow.communities(level)), reports)
