"""Two sources must not cover the same documents (each would prune what the other wrote).
`ragwright sync` stops a run that meets a document another source's checkpoint holds; this
module catches the overlap earlier, at ``sync add``, from the sources' settings alone: a
source's scope is the prefixes its document sources start with (a folder's roots, a bucket
and prefix, a website's host; `ports.ScopedSource`), and two scopes overlap when one prefix
starts another. A source that cannot say (a third-party type without ``scopes``, a GraphQL
API whose items name their own URLs) is left to the sync-time check.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError, RagwrightError
from ragwright.ports import ScopedSource, Source
from ragwright.sources import FolderSource, SourceSettings, open_source


def scopes_of(source: Source | FolderSource) -> tuple[str, ...] | None:
    """The prefixes of every document source ``source`` can produce; None if it cannot say."""
    if isinstance(source, FolderSource):
        return tuple(root.resolve().as_posix().rstrip("/") + "/" for root in source.roots)
    if isinstance(source, ScopedSource):
        return source.scopes
    return None


def refuse_overlap(config: Config, name: str, table: dict[str, Any]) -> None:
    """`ConfigError` when the source ``name`` (its ``table``) would cover documents another
    source of ``config`` covers, naming both and the shared prefix."""
    sources = {**config.section("sources"), name: table}
    added = Config({**config.data, "sources": sources}, config.path)
    new = _scopes(added, name)
    if not new:
        return
    for other in sorted(config.section("sources")):
        for theirs in _scopes(added, other) or ():
            for ours in new:
                if ours.startswith(theirs) or theirs.startswith(ours):
                    raise ConfigError(
                        f"source {name!r} would cover documents source {other!r} covers "
                        f"(both under {min(ours, theirs, key=len)!r}): two sources of one "
                        "collection must not share documents; narrow one of them"
                    )


def _scopes(config: Config, name: str) -> tuple[str, ...] | None:
    """The scope of the configured source ``name``, read from its settings without fetching
    anything; None when it cannot be opened now (credentials set only for `sync run`)."""
    try:
        source = open_source(SourceSettings.from_config(config, name))
    except RagwrightError:
        return None
    try:
        return scopes_of(source)
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            with suppress(Exception):
                close()
