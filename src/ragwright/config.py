"""The configuration file: TOML, one table per concern (``[llm]``, ``[server]``, ...).

Where it is read from, first match wins: an explicit path (``--config``), the
``RAGWRIGHT_CONFIG`` environment variable, then ``ragwright.toml`` in the working directory.
No file is fine: every setting has a default. Each concern parses its own table and names the
file and key in its errors, so this module only finds, reads and hands out tables.

Any setting may also come from the environment, as containers expect:
``RAGWRIGHT_<TABLE>__<KEY>`` (``RAGWRIGHT_SEARCH__TOP_K=1``; a nested table adds a level:
``RAGWRIGHT_LLM__BUDGET__REQUEST_CALLS=20``). Such a variable overrides the file's key; a
command-line flag overrides both. Its value is read as the file's value at that key would be
typed (a number, true or false, a list), else as a TOML value, else as plain text; the
concern then checks it as it checks the file, and its error names the variable.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError

CONFIG_ENV = "RAGWRIGHT_CONFIG"
CONFIG_FILE = "ragwright.toml"
#: The prefix of a setting's environment variable, and what separates its table and key.
ENV_PREFIX = "RAGWRIGHT_"
ENV_SEPARATOR = "__"
#: The tables a ragwright.toml may hold (`ragwright init` writes each of them).
TABLES = (
    "llm", "answer", "search", "planner", "graph", "server", "federation", "store", "sources",
)  # fmt: skip


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

    #: The environment variables that overrode or added settings (see `with_environment`).
    overrides: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        place = str(self.path) if self.path else "configuration"
        return f"{place} (with {', '.join(self.overrides)})" if self.overrides else place

    def with_environment(self, environ: Mapping[str, str]) -> Config:
        """This configuration with the ``RAGWRIGHT_<TABLE>__<KEY>`` variables of ``environ``
        over its keys (see the module's docstring)."""
        data = _copy_tables(self.data)
        used = []
        for name in sorted(environ):
            if not name.startswith(ENV_PREFIX) or ENV_SEPARATOR not in name:
                continue
            path = [part.lower() for part in name[len(ENV_PREFIX) :].split(ENV_SEPARATOR)]
            _set(data, name, path, environ[name])
            used.append(name)
        return Config(data, self.path, (*self.overrides, *used)) if used else self


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


def load_config(
    explicit: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read the configuration file (see `config_path`; an absent default file gives
    defaults) with the settings of the environment (``environ``, default `os.environ`) over
    it."""
    environ = os.environ if environ is None else environ
    path = config_path(explicit)
    if path is None:
        return Config().with_environment(environ)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    return Config(data, path).with_environment(environ)


def _copy_tables(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _copy_tables(v) if isinstance(v, dict) else v for k, v in data.items()}


def _set(data: dict[str, Any], name: str, path: list[str], raw: str) -> None:
    """Put the variable ``name``'s value at ``path`` (table, [sub-tables], key)."""
    if len(path) < 2 or not all(path):
        raise ConfigError(f"{name}: name a table and a key: {ENV_PREFIX}TABLE{ENV_SEPARATOR}KEY")
    if path[0] not in TABLES:
        raise ConfigError(f"{name}: there is no [{path[0]}] table; tables: {', '.join(TABLES)}")
    table = data
    for depth, part in enumerate(path[:-1]):
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            where = ".".join(path[: depth + 1])
            raise ConfigError(f"{name}: {where} is a value in the configuration, not a table")
    key = path[-1]
    table[key] = _typed(name, raw, table.get(key))


def _typed(name: str, raw: str, current: object) -> object:
    """``raw`` as a value of ``current``'s type (the file's value there), else as a TOML
    value, else as text."""
    if isinstance(current, str):
        return raw
    value = _toml_value(raw)
    if current is None:
        return raw if value is None else value
    number = isinstance(current, int | float) and not isinstance(current, bool)
    if number:  # either kind: the concern checks whether it takes a fraction
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        fits = isinstance(value, type(current))
    if not fits:
        kind = "a number" if number else f"a TOML {type(current).__name__}"
        kind = "true or false" if isinstance(current, bool) else kind
        raise ConfigError(f"{name} must be {kind}, as the file's value is; not {raw!r}")
    return value


def _toml_value(raw: str) -> object:
    """``raw`` read as one TOML value (``1``, ``0.5``, ``true``, ``["a"]``, ``"text"``); None
    when it is not one (plain text, such as a model name)."""
    try:
        return tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return None
