"""A source's ``[sources.NAME]`` table, read key by key with typed errors.

Secrets are never written in the table (nor stored in the index): a secret setting ``KEY`` is
given as ``KEY_env = "VARIABLE"`` (read from the environment) or ``KEY_file = "path"`` (a file
that only its owner may read: mode 0600 or stricter). A literal ``KEY = "..."`` is refused.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError, CredentialsError

SOURCE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def check_source_name(name: str) -> str:
    if not SOURCE_NAME.match(name):
        raise ConfigError(f"source name {name!r}: use 1-64 letters, digits, '-' and '_'")
    return name


@dataclass
class SourceSettings:
    """``table`` is the source's table without ``type``; relative paths are resolved against
    ``base`` (the configuration file's folder)."""

    name: str
    type: str
    table: Mapping[str, Any]
    where: str = "configuration"
    base: Path = field(default_factory=Path.cwd)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    _read: set[str] = field(default_factory=set)

    @classmethod
    def from_config(cls, config: Config, name: str) -> SourceSettings:
        """The ``[sources.NAME]`` table of ``config``; `ConfigError` when there is none."""
        tables = config.section("sources")
        table = tables.get(name)
        if not isinstance(table, dict):
            known = ", ".join(sorted(tables)) or "none"
            raise ConfigError(f"{config.where}: no source {name!r} in [sources]; known: {known}")
        kind = table.get("type")
        where = f"{config.where}: [sources.{name}]"
        if not isinstance(kind, str):
            raise ConfigError(f'{where} needs type = "files", "website", "s3", ...')
        base = config.path.resolve().parent if config.path else Path.cwd()
        rest = {k: v for k, v in table.items() if k != "type"}
        return cls(check_source_name(name), kind, rest, where, base)

    def unused(self) -> list[str]:
        """Keys no one asked for (a misspelt setting is an error, not silently ignored)."""
        return sorted(k for k in self.table if k not in self._read)

    def _get(self, key: str) -> Any:
        self._read.add(key)
        return self.table.get(key)

    def string(self, key: str, default: str | None = None) -> str | None:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ConfigError(f"{self.where}: {key} must be a string")
        return value

    def required(self, key: str) -> str:
        value = self.string(key)
        if not value:
            raise ConfigError(f'{self.where}: the {self.type} source needs {key} = "..."')
        return value

    def integer(self, key: str, default: int, *, minimum: int = 0) -> int:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"{self.where}: {key} must be an integer of at least {minimum}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{self.where}: {key} must be true or false")
        return value

    def strings(self, key: str) -> list[str]:
        value = self._get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{self.where}: {key} must be a list of strings")
        return list(value)

    def path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.base / path

    def secret(self, key: str, *, required: bool = True) -> str | None:
        """The secret ``key`` from ``KEY_env`` or ``KEY_file`` (see the module's note)."""
        if self._get(key) is not None:
            raise CredentialsError(
                f"{self.where}: {key} is a secret and is not read from the configuration file; "
                f'set {key}_env = "VARIABLE" or {key}_file = "path" (mode 0600)'
            )
        variable = self.string(f"{key}_env")
        file = self.string(f"{key}_file")
        if variable is not None and file is not None:
            raise ConfigError(f"{self.where}: give {key}_env or {key}_file, not both")
        if variable is not None:
            value = self.environ.get(variable)
            if not value:
                raise CredentialsError(
                    f"{self.where}: the environment variable {variable} ({key}) is not set"
                )
            return value
        if file is not None:
            return read_secret_file(self.path(file), f"{self.where}: {key}_file")
        if required:
            raise CredentialsError(
                f'{self.where}: the {self.type} source needs {key}_env = "VARIABLE" or '
                f'{key}_file = "path"'
            )
        return None


def read_secret_file(path: Path, what: str) -> str:
    """The stripped text of a secrets file that only its owner can read."""
    try:
        found = path.stat()
    except OSError as error:
        raise CredentialsError(f"{what}: cannot read {path}: {error.strerror}") from error
    if found.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise CredentialsError(
            f"{what}: {path} is readable by others (mode {stat.S_IMODE(found.st_mode):04o}); "
            f"run `chmod 600 {path}`"
        )
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CredentialsError(f"{what}: cannot read {path}: {error}") from error
    if not value:
        raise CredentialsError(f"{what}: {path} is empty")
    return value
