"""Sync sources by type name: the ``ragwright.sources`` entry points, each a callable taking
the source's `SourceSettings` (its ``[sources.NAME]`` table) and returning a `ports.Source`,
or a `FolderSource` for the file system. The built-ins register there too (``files``,
``website``, ``s3``, ``graphql``), so a third-party source is opened the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.ports import Source
from ragwright.sources.files import FolderSource
from ragwright.sources.settings import SourceSettings

GROUP = "ragwright.sources"

Opener = Callable[[SourceSettings], Source | FolderSource]


def source_types() -> list[str]:
    return sorted(plugins(GROUP, "source"))


def open_source(settings: SourceSettings) -> Source | FolderSource:
    """The source ``settings`` describe; `RegistryError` for an unknown type, `ConfigError`
    for a setting it does not know."""
    found = plugins(GROUP, "source").get(settings.type)
    if found is None:
        raise RegistryError(
            f"{settings.where}: unknown source type {settings.type!r}; known: "
            f"{', '.join(source_types())}"
        )
    opener = cast(Opener, found.load())
    source = opener(settings)
    unknown = settings.unused()
    if unknown:
        _close(source)
        raise ConfigError(
            f"{settings.where}: the {settings.type} source has no setting "
            f"{', '.join(repr(k) for k in unknown)}"
        )
    return source


def _close(source: Any) -> None:
    close = getattr(source, "close", None)
    if callable(close):
        close()


__all__ = ["FolderSource", "SourceSettings", "open_source", "source_types"]
