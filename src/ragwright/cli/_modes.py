"""``--mode``: the search modes as the registry lists them when the command runs (plugins'
included; see `ragwright.pipeline.search.modes`), so no command spells the list itself."""

from __future__ import annotations

import typer

from ragwright.errors import ConfigError
from ragwright.pipeline.search.mode_registry import known_name, mode_names


def search_mode(value: str) -> str:
    """``value`` as a mode name the registry knows; else a usage error listing them."""
    try:
        return known_name(value)
    except ConfigError as error:
        raise typer.BadParameter(str(error)) from None


def mode_help(text: str) -> str:
    """``text`` with the modes the registry knows when the command is defined."""
    return f"{text} One of: {', '.join(mode_names())}."
