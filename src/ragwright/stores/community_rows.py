"""Community rows as both stores read them, grouped into `StoredCommunity` values."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ragwright.models.communities import Community, StoredCommunity


def grouped_communities(
    rows: Sequence[Sequence[Any]], members: Sequence[Sequence[Any]]
) -> list[StoredCommunity]:
    """``rows``: (id, level, parent, dirty); ``members``: (community id, key) in key order."""
    keys: dict[int, list[str]] = defaultdict(list)
    for community, key in members:
        keys[int(community)].append(str(key))
    return [
        StoredCommunity(
            Community(
                id=int(cid),
                level=int(level),
                parent=int(parent) if parent is not None else None,
                members=tuple(keys[int(cid)]),
            ),
            bool(dirty),
        )
        for cid, level, parent, dirty in rows
    ]


def alias_rows(
    communities: Sequence[Community], merges: Sequence[tuple[str, str]]
) -> list[tuple[int, str]]:
    """(community id, key) for every key merged with a member but not itself a member: the
    graph reads a merge group as one entity under one of its keys, so a mention of any key of
    the group changes that member's facts (the triggers read these rows beside the members)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for first, second in merges:
        a, b = root(first), root(second)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[str, set[str]] = defaultdict(set)
    for key in list(parent):
        groups[root(key)].add(key)
    for top in list(groups):
        groups[top].add(top)
    rows: list[tuple[int, str]] = []
    for community in communities:
        members = set(community.members)
        merged = {key for member in members for key in groups.get(root(member), ())}
        rows += [(community.id, key) for key in sorted(merged - members)]
    return rows
