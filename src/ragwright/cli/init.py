"""`ragwright init`: write a commented ``ragwright.toml`` to start from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import console, reports_errors
from ragwright.cli.init_template import template
from ragwright.config import CONFIG_FILE
from ragwright.errors import ConfigError


@reports_errors
def init(
    path: Annotated[Path, typer.Argument(help="The file to write.", dir_okay=False)] = Path(
        CONFIG_FILE
    ),
    force: Annotated[bool, typer.Option(help="Replace the file if it exists.")] = False,
) -> None:
    """Write a commented ragwright.toml listing every setting, to start from."""
    if path.exists() and not force:
        raise ConfigError(f"{path} exists; pass --force to replace it")
    path.write_text(template(), encoding="utf-8")
    console.print(f"wrote {escape(str(path))}: uncomment a setting to change it")
