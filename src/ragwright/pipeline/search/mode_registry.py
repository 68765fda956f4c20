"""The registry of retrieval modes by name: the built-ins (each `SearchMode` but ``auto``, in the
module of its name in `ragwright.pipeline.search.modes`, imported on first use; ``global_`` for
``global``), then plugins' (the ``ragwright.modes`` entry points, or `register_mode`).

It knows a mode by what a request and the surfaces need (`NamedMode`); the search a mode runs
is `ragwright.pipeline.search.modes.RetrievalMode`'s. It imports none of the search modules,
so the request, the retriever and the surfaces can ask it without a circle of imports.
"""

from __future__ import annotations

import keyword
import threading
from importlib import import_module
from typing import Protocol

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.search_mode import SearchMode

__all__ = [
    "PLUGIN_GROUP",
    "NamedMode",
    "arms_of",
    "known_name",
    "mode_names",
    "plannable_modes",
    "register_mode",
    "registered",
    "unregister_mode",
]

#: Where plugins declare their modes (the entry point's object is the mode).
PLUGIN_GROUP = "ragwright.modes"


class NamedMode(Protocol):
    """What is known of a mode without running it."""

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


_BUILTIN_NAMES = frozenset(member.value for member in SearchMode if member is not SearchMode.AUTO)
_builtins: dict[str, NamedMode] = {}
_registered: dict[str, NamedMode] = {}
_lock = threading.Lock()
_plugins_loaded = False


def register_mode(mode: NamedMode) -> None:
    """Add a plugin's mode (or replace one it registered before); a built-in's name is taken.
    The mode is a `ragwright.pipeline.search.modes.RetrievalMode`."""
    if mode.name in _BUILTIN_NAMES or mode.name == SearchMode.AUTO:
        raise ConfigError(f"{mode.name!r} is a built-in search mode")
    if not callable(getattr(mode, "search", None)) or not callable(
        getattr(mode, "unavailable", None)
    ):
        raise RegistryError(f"the search mode {mode.name!r} has no search or unavailable method")
    _load_plugins()
    with _lock:
        _registered[mode.name] = mode


def unregister_mode(name: str) -> None:
    """Remove a plugin's mode (tests register toys)."""
    with _lock:
        _registered.pop(name, None)


def registered(name: str) -> NamedMode:
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
        plugins_ = tuple(_registered)
    return (*(member.value for member in SearchMode), *plugins_)


def known_name(value: str) -> str:
    """``value`` as a mode name the registry knows (case and spaces aside); else a
    `ConfigError` listing them (the surfaces' check of what a user typed)."""
    name = value.strip().lower()
    if name not in mode_names():
        raise ConfigError(f"{value!r} is none of {', '.join(mode_names())}")
    return name


def plannable_modes() -> tuple[str, ...]:
    """The modes ``auto``'s planner may route to."""
    return tuple(
        name for name in mode_names() if name != SearchMode.AUTO and registered(name).plannable
    )


def arms_of(mode: str) -> Arms:
    """The arms of the mode named ``mode``; a mode with a search of its own (graph, global),
    and auto's routing, run through `Index.search`, not a bare `Retriever`."""
    arms = None if mode == SearchMode.AUTO else registered(mode).arms
    if arms is None:
        raise ConfigError(
            f"mode {mode} does not search through the retrieval arms alone; use Index.search"
        )
    return arms


def _builtin(name: str) -> NamedMode:
    """The module of a built-in mode, imported on first use (``global_`` for ``global``)."""
    mode = _builtins.get(name)
    if mode is None:
        package = "ragwright.pipeline.search.modes"
        module = f"{package}.{name}_" if keyword.iskeyword(name) else f"{package}.{name}"
        mode = _builtins[name] = import_module(module).MODE
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
