"""Retrieval modes as strategies: one small module per mode, found by its name.

A mode says whether the planner may route a question to it, whether this index can serve it
(and why not), whether its scores are a fused ranking, and runs its search over the collection's
`SearchContext`. The built-in modes are the members of `SearchMode` (but ``auto``, which routes
to one of them), each in the module of its name here (``global_`` for ``global``); a plugin
adds its own through the ``ragwright.modes`` entry point group (the object is the mode), or
with `register_mode`. Every surface (CLI choices, the HTTP and MCP schemas, the
planner, the rag-connector spec) reads the list from `mode_names`, so a new mode is one module
and one `SearchMode` member.
"""

from __future__ import annotations

import keyword
import threading
from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Protocol

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.pipeline.search.search_mode import SearchMode

if TYPE_CHECKING:
    from ragwright.models import Hit
    from ragwright.permissions import Caller
    from ragwright.pipeline.search.arms import Arms
    from ragwright.pipeline.search.context import SearchContext
    from ragwright.pipeline.search.request import SearchRequest
    from ragwright.query.model import QueryProcessor

__all__ = [
    "RetrievalMode",
    "mode_names",
    "plannable_modes",
    "register_mode",
    "retrieval_mode",
]


class RetrievalMode(Protocol):
    """One way to search a collection."""

    @property
    def name(self) -> str:
        """What a request names it by (``SearchRequest.mode``)."""

    @property
    def plannable(self) -> bool:
        """Whether ``mode="auto"``'s planner may route a question to it."""

    @property
    def fused(self) -> bool:
        """Whether its scores are a fused ranking, which a similarity threshold cannot cut."""

    @property
    def arms(self) -> Arms | None:
        """The arms it retrieves through `Retriever` alone; None: a search of its own."""

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


#: Where plugins declare their modes.
PLUGIN_GROUP = "ragwright.modes"
_BUILTIN_NAMES = frozenset(member.value for member in SearchMode if member is not SearchMode.AUTO)
_builtins: dict[str, RetrievalMode] = {}
_registered: dict[str, RetrievalMode] = {}
_lock = threading.Lock()
_plugins_loaded = False


def register_mode(mode: RetrievalMode) -> None:
    """Add a plugin's mode (or replace one it registered before); a built-in's name is taken."""
    if mode.name in _BUILTIN_NAMES or mode.name == SearchMode.AUTO:
        raise ConfigError(f"{mode.name!r} is a built-in search mode")
    _load_plugins()
    with _lock:
        _registered[mode.name] = mode


def unregister_mode(name: str) -> None:
    """Remove a plugin's mode (tests register toys)."""
    with _lock:
        _registered.pop(name, None)


def retrieval_mode(name: str) -> RetrievalMode:
    """The mode named ``name``; an unknown name is a `ConfigError` listing the known ones."""
    if name in _BUILTIN_NAMES:
        return _builtin(name)
    _load_plugins()
    found = _registered.get(name)
    if found is None:
        raise ConfigError(f"unknown search mode {name!r}; choose one of {', '.join(mode_names())}")
    return found


def mode_names() -> tuple[str, ...]:
    """Every mode a request may name: the built-ins in `SearchMode`'s order (``auto``
    among them), then the plugins' in the order they were registered."""
    _load_plugins()
    with _lock:
        plugins = tuple(_registered)
    return (*(member.value for member in SearchMode), *plugins)


def plannable_modes() -> tuple[str, ...]:
    """The modes ``auto``'s planner may route to."""
    return tuple(
        name for name in mode_names() if name != SearchMode.AUTO and retrieval_mode(name).plannable
    )


def _builtin(name: str) -> RetrievalMode:
    """The module of a built-in mode, imported on first use (``global_`` for ``global``)."""
    mode = _builtins.get(name)
    if mode is None:
        module = f"{__name__}.{name}_" if keyword.iskeyword(name) else f"{__name__}.{name}"
        mode = import_module(module).MODE
        _builtins[name] = mode
    return mode


def _load_plugins() -> None:
    """The ``ragwright.modes`` entry points, loaded once."""
    global _plugins_loaded
    with _lock:
        if _plugins_loaded:
            return
        _plugins_loaded = True
        found = plugins(PLUGIN_GROUP, "search mode")
    for name, entry in found.items():
        mode = entry.load()
        if mode.name != name:
            raise RegistryError(f"the search mode plugin {name!r} names itself {mode.name!r}")
        register_mode(mode)
