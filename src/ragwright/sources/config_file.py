"""Adding and removing ``[sources.NAME]`` tables in the configuration file, keeping its
comments and layout (tomlkit). Only settings are written: a secret is named by the variable
or file it is read from (``KEY_env``, ``KEY_file``), never written itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragwright.errors import ConfigError, CredentialsError, MissingDependencyError
from ragwright.sources.settings import check_source_name

#: The built-in sources' secret settings: refused as literals (they go in KEY_env, KEY_file).
SECRETS = frozenset({"api_key", "client_secret", "access_key_id", "secret_access_key"})


def add_source(path: Path, name: str, table: Mapping[str, Any]) -> None:
    """Add ``[sources.NAME]`` = ``table`` to ``path`` (created, mode 0600, when missing)."""
    check_source_name(name)
    written = sorted(SECRETS & set(table))
    if written:
        raise CredentialsError(
            f"{written[0]} is a secret and is not written to {path}; set {written[0]}_env "
            f"(an environment variable's name) or {written[0]}_file (a mode-0600 file) instead"
        )
    tomlkit = _tomlkit()
    document = _read(path)
    if "sources" not in document:
        document["sources"] = tomlkit.table(is_super_table=True)
    sources = document["sources"]
    if name in sources:
        raise ConfigError(f"{path} already has a source named {name!r}; remove it first")
    entry = tomlkit.table()
    for key, value in table.items():
        entry[key] = value
    sources[name] = entry
    _write(path, tomlkit.dumps(document))


def remove_source(path: Path, name: str) -> bool:
    """Remove ``[sources.NAME]`` from ``path``; False when there was none."""
    if not path.is_file():
        return False
    document = _read(path)
    sources = document.get("sources")
    if sources is None or name not in sources:
        return False
    del sources[name]
    _write(path, _tomlkit().dumps(document))
    return True


def _tomlkit() -> Any:
    try:
        import tomlkit
    except ImportError:
        raise MissingDependencyError(
            "editing sync sources", "pip install 'ragwright[sources]'"
        ) from None
    return tomlkit


def _read(path: Path) -> Any:
    tomlkit = _tomlkit()
    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc


def _write(path: Path, text: str) -> None:
    """Atomically: a temporary file renamed over the old one, keeping the old one's mode."""
    temporary = path.with_name(path.name + ".tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"cannot write config file {path}: {exc}") from exc
