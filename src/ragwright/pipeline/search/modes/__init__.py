"""Retrieval modes as strategies: one small module per mode, found by its name.

A mode says whether the planner may route a question to it, whether this index can serve it
(and why not), whether its scores are a fused ranking, and runs its search over the collection's
`SearchContext`. The built-in modes are the members of `SearchMode` (but ``auto``, which routes
to one of them), each in the module of its name here (``global_`` for ``global``); a plugin
adds its own through the ``ragwright.modes`` entry point group (the object is the mode), or
with `register_mode` (see `ragwright.pipeline.search.mode_registry`). Every surface (CLI
choices, the HTTP and MCP schemas, the planner, the rag-connector spec) reads the list from
`mode_names`, so a new mode is one module and one `SearchMode` member.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.mode_registry import (
    NamedMode,
    mode_names,
    plannable_modes,
    register_mode,
    registered,
    unregister_mode,
)
from ragwright.pipeline.search.request import SearchRequest
from ragwright.query.model import QueryProcessor

__all__ = [
    "RetrievalMode",
    "mode_names",
    "plannable_modes",
    "register_mode",
    "retrieval_mode",
    "unregister_mode",
]


class RetrievalMode(NamedMode, Protocol):
    """One way to search a collection."""

    def unavailable(self, context: SearchContext, caller: Caller) -> str | None:
        """Why this index cannot serve it to ``caller`` now (None: it can)."""

    def search(
        self,
        context: SearchContext,
        query: str,
        request: SearchRequest,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        """The hits for ``query``, best first (the caller's processors run after)."""


def retrieval_mode(name: str) -> RetrievalMode:
    """The mode named ``name`` (`register_mode` checked it can search); an unknown name is a
    `ConfigError` listing the known ones."""
    return cast(RetrievalMode, registered(name))
