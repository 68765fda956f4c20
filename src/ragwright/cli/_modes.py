"""``--mode``: the search modes as the registry lists them when the command runs (plugins'
included; see `ragwright.pipeline.search.modes`), so no command spells the list itself."""

from __future__ import annotations

import typer

from ragwright.pipeline.search.modes import mode_names


def search_mode(value: str) -> str:
    """``value`` as a mode name the registry knows; else a usage error listing them."""
    name = value.strip().lower()
    if name not in mode_names():
        raise typer.BadParameter(f"{value!r} is none of {', '.join(mode_names())}")
    return name


def mode_help(text: str) -> str:
    """``text`` with the modes the registry knows when the command is defined."""
    return f"{text} One of: {', '.join(mode_names())}."
