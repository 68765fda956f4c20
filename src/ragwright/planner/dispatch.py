"""From a planned route to one that runs on this index.

Each mode says whether the index can run it (graph search needs a built entity graph, global
search community reports: see `ragwright.pipeline.search.modes`). A planned mode the index
cannot run becomes hybrid, and the reason says so (that fallback is behaviour, not a stopgap:
an index without a graph is the common case).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragwright.models import Route


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What an index can search beside bm25, vector and hybrid."""

    graph: bool = False
    global_search: bool = False


def dispatch(planned: Route, unavailable: Callable[[str], str | None]) -> Route:
    """``planned`` with ``mode`` set to what runs: its own mode where the index can run it
    (``unavailable`` of it says None), else hybrid with the reason extended by why not."""
    missing = unavailable(planned.planned)
    if missing is None:
        return planned
    return Route(
        "hybrid",
        f"{planned.reason}; {missing}, so hybrid",
        planned=planned.planned,
        planner=planned.planner,
        per_document=planned.per_document,
    )


def requested(mode: str) -> Route:
    """The route of a search whose caller named the mode."""
    return Route(mode, f"mode {mode} was asked for", planner="request")
