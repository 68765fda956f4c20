"""Federated search: several indexes (directories or store URLs, any stores and embedders)
searched as one, their rankings fused by rank, each hit naming the index it came from.

    from ragwright import Federation
    with Federation.open(["team=./team/.ragwright", "postgresql://me@db/notes"]) as both:
        found = both.search("rotation policy", top_k=5)
        for hit in found.hits:
            print(hit.index, hit.source, hit.chunk.char_start)
        print(found.warnings)  # a member that failed or was late, and why

See docs/scaling.md (Federated search) and `ragwright.federation.settings` for the
``[federation]`` table `serve` and `mcp` read.
"""

from __future__ import annotations

from ragwright.federation.federation import FederatedSearch, Federation
from ragwright.federation.members import MemberSpec
from ragwright.federation.settings import DEFAULT_TIMEOUT, FederationSettings

__all__ = ["DEFAULT_TIMEOUT", "FederatedSearch", "Federation", "FederationSettings", "MemberSpec"]
