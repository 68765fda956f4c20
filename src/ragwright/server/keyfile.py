"""Adding and removing API keys in the configuration file, keeping its comments and layout.

Only the hash of a key is written (``[server.keys.NAME]``: ``hash``, ``scope``, ``created``);
the secret itself is returned once to be shown to the user and is never stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragwright.config_edit import read_document, tomlkit_for, write_text
from ragwright.errors import ConfigError
from ragwright.server.keys import KEY_NAME, Scope, digest_of, new_secret


def add_key(path: Path, name: str, scope: Scope, principals: tuple[str, ...] | None = None) -> str:
    """Create a key named ``name`` (bound to ``principals`` when given), store its hash in
    ``path`` (created if missing) and return the secret."""
    if not KEY_NAME.match(name):
        raise ConfigError(f"key name {name!r}: use 1-64 letters, digits, '-' and '_'")
    document = _read(path)
    keys = _keys_table(document, create=True)
    if name in keys:
        raise ConfigError(f"{path} already has a key named {name!r}; remove it first")
    secret = new_secret()
    tomlkit = _tomlkit()
    entry = tomlkit.table()
    entry["hash"] = digest_of(secret)
    entry["scope"] = scope.value
    if principals is not None:
        entry["principals"] = list(principals)
    entry["created"] = datetime.now(UTC).replace(microsecond=0).isoformat()
    keys[name] = entry
    _write(path, document)
    return secret


def remove_key(path: Path, name: str) -> bool:
    """Remove the key ``name`` from ``path``. False when there was none."""
    if not path.is_file():
        return False
    document = _read(path)
    keys = _keys_table(document, create=False)
    if keys is None or name not in keys:
        return False
    del keys[name]
    _write(path, document)
    return True


def _tomlkit() -> Any:
    return tomlkit_for("editing API keys", "server")


def _read(path: Path) -> Any:
    return read_document(path, _tomlkit())


def _keys_table(document: Any, *, create: bool) -> Any:
    tomlkit = _tomlkit()
    if "server" not in document:
        if not create:
            return None
        document["server"] = tomlkit.table()
    server = document["server"]
    if "keys" not in server:
        if not create:
            return None
        keys = tomlkit.table(is_super_table=True)
        server["keys"] = keys
    return server["keys"]


def _write(path: Path, document: Any) -> None:
    write_text(path, _tomlkit().dumps(document))
