"""Community rows as both stores read them, grouped into `StoredCommunity` values."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ragwright.graph.community_model import Community, StoredCommunity


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
