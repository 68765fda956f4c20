"""The configuration file: TOML, one table per concern (``[llm]``, ``[server]``, ...).

Where it is read from, first match wins: an explicit path (``--config``), the
``RAGWRIGHT_CONFIG`` environment variable, then ``ragwright.toml`` in the working directory.
No file is fine: every setting has a default. Each concern parses its own table and names the
file and key in its errors, so this module only finds, reads and hands out tables.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError

CONFIG_ENV = "RAGWRIGHT_CONFIG"
CONFIG_FILE = "ragwright.toml"


@dataclass(frozen=True)
class Config:
    """The parsed file (``path`` is None when there was none)."""

    data: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def section(self, name: str) -> dict[str, Any]:
        """The table ``[name]``, or an empty one; a non-table value is a `ConfigError`."""
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{self.where}: [{name}] must be a table, not {type(value).__name__}")
        return value

    @property
    def where(self) -> str:
        return str(self.path) if self.path else "configuration"


def config_path(explicit: str | Path | None = None) -> Path | None:
    """The file to read: explicit, else ``$RAGWRIGHT_CONFIG``, else ``./ragwright.toml`` if
    present. An explicit or environment path that does not exist is a `ConfigError`."""
    chosen = explicit or os.environ.get(CONFIG_ENV)
    if chosen:
        path = Path(chosen)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        return path
    default = Path(CONFIG_FILE)
    return default if default.is_file() else None


def load_config(explicit: str | Path | None = None) -> Config:
    """Read the configuration file (see `config_path`); an absent default file gives defaults."""
    path = config_path(explicit)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    return Config(data, path)
