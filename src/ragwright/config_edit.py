"""Editing ``ragwright.toml`` in place, keeping its comments and layout (tomlkit): the one
reader and atomic writer behind ``ragwright keys`` and ``ragwright sync add|remove``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, MissingDependencyError


def tomlkit_for(purpose: str, extra: str) -> Any:
    """The tomlkit module, or `MissingDependencyError` naming ``purpose`` and the extra that
    installs it."""
    try:
        import tomlkit
    except ImportError:
        raise MissingDependencyError(purpose, f"pip install 'ragwright[{extra}]'") from None
    return tomlkit


def read_document(path: Path, tomlkit: Any) -> Any:
    """``path`` as a tomlkit document (an empty one when there is no file)."""
    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc


def write_text(path: Path, text: str) -> None:
    """Atomically (a temporary file renamed over the old one), keeping the old file's mode;
    a new file is readable by its owner only, since it may name credentials or key hashes."""
    temporary = path.with_name(path.name + ".tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"cannot write config file {path}: {exc}") from exc
