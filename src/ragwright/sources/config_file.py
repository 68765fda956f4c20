"""Adding and removing ``[sources.NAME]`` tables in the configuration file, keeping its
comments and layout (tomlkit). Only settings are written: a secret is named by the variable
or file it is read from (``KEY_env``, ``KEY_file``), never written itself."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragwright.config_edit import read_document, tomlkit_for, write_text
from ragwright.errors import ConfigError, CredentialsError
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
    write_text(path, tomlkit.dumps(document))


def remove_source(path: Path, name: str) -> bool:
    """Remove ``[sources.NAME]`` from ``path``; False when there was none."""
    if not path.is_file():
        return False
    document = _read(path)
    sources = document.get("sources")
    if sources is None or name not in sources:
        return False
    del sources[name]
    write_text(path, _tomlkit().dumps(document))
    return True


def _tomlkit() -> Any:
    return tomlkit_for("editing sync sources", "sources")


def _read(path: Path) -> Any:
    return read_document(path, _tomlkit())
