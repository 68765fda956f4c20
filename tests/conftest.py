"""Test-wide fixtures: the network is blocked except loopback, so no test can download."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):  # unix socket path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        raise OSError(f"network access is blocked in tests (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield


@pytest.fixture(autouse=True)
def _user_cache_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Caches that default to the user's (eval's indexes) go to the test's own folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


# The PostgreSQL server of the session and a fresh database per test (tests/pg_server.py).
from pg_server import pg_server, pg_url  # noqa: E402, F401
