"""Secrets in store URLs: a password in the user information or in the query (``?password=``,
``?sslpassword=``, ``?token=``, …) is masked wherever a URL is shown (`GET /v1/federation`, a
partial search's warnings, the start-up log, errors); and a URL with no host,
``postgresql:///db?host=/socket/dir``, opens as libpq reads it."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli_helpers import runner
from federation_helpers import build_team
from ragwright import Index
from ragwright.cli import app
from ragwright.errors import ConfigError
from ragwright.stores import display_location
from ragwright.stores.postgres.backend import normalize_url
from ragwright.testing import HashingEmbedder
from server_helpers import free_port, wait_for

SECRETS = ("userinfo-secret", "query-secret", "ssl-secret", "other-secret")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://rw:pw@db.example/kb", "postgresql://rw:***@db.example/kb"),
        ("postgresql://rw@db.example/kb", "postgresql://rw@db.example/kb"),
        ("postgresql://rw:@/kb?host=/run/pg", "postgresql://rw:***@/kb?host=/run/pg"),
        (
            "postgresql://h/kb?sslmode=require&password=pw&PassWord=pw2&sslpassword=s",
            "postgresql://h/kb?sslmode=require&password=***&PassWord=***&sslpassword=***",
        ),
        ("postgresql:///kb?host=/run/pg&pass%77ord=pw", "postgresql:///kb?host=/run/pg&pass%77ord=***"),
        ("postgres://u:p?w#x@h:5432/kb#frag", "postgres://u:***@h:5432/kb#frag"),
        ("https://h/x?token=t&api_key=k&Client_Secret=c&q=1", "https://h/x?token=***&api_key=***&Client_Secret=***&q=1"),
        ("./my-index", "./my-index"),
    ],
)  # fmt: skip
def test_display_location_masks_the_password_and_secret_parameters(url: str, shown: str) -> None:
    assert display_location(url) == shown


def test_normalizing_keeps_a_url_without_a_host_as_written() -> None:
    assert normalize_url("postgres:///kb?host=/run/pg") == "postgresql:///kb?host=/run/pg"
    assert normalize_url("POSTGRESQL://u@h/kb") == "postgresql://u@h/kb"
    with pytest.raises(ConfigError, match=r"not a PostgreSQL URL: mysql://u:\*\*\*@h/kb"):
        normalize_url("mysql://u:pw@h/kb")


def _hostless(url: str) -> str:
    """The test server's URL (``postgresql://postgres:@/DB?host=DIR``) without a host part."""
    database_and_query = url.split("@/", 1)[1]
    return f"postgresql:///{database_and_query}&user=postgres"


def test_a_url_without_a_host_opens(pg_url: str) -> None:
    hostless = _hostless(pg_url)
    assert hostless.startswith("postgresql:///rw_") and "?host=/" in hostless
    with Index(hostless, embedder=HashingEmbedder()) as kb:
        assert kb.ingestion.documents([]).ok
        assert kb.display_location == hostless


def test_serve_shows_no_secret_of_a_member_url(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A federation of a SQLite index, a PostgreSQL one whose URL carries a password and an
    SSL key's password in its query (the test server trusts local connections: unused), and
    one that cannot be reached: the start-up log, `/v1/federation` and the warnings of a
    restricted key's search show every URL with its secrets masked."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ragwright.toml"
    keys = {}
    for name, flags in (("admin", []), ("reader", ["--principal", "group:x"])):
        added = runner.invoke(app, ["keys", "add", name, *flags, "--config", str(config)])
        assert added.exit_code == 0, added.output
        keys[name] = {"Authorization": f"Bearer {added.stdout.strip().splitlines()[-1]}"}
    team = build_team(tmp_path / "team")
    reachable = f"{pg_url}&password=query-secret&sslpassword=ssl-secret"
    with Index(reachable, embedder=HashingEmbedder(320)) as kb:
        assert kb.ingestion.documents([]).ok
    unreachable = "postgresql://rw:userinfo-secret@127.0.0.1:1/kb?password=other-secret"
    members = [f"team={team}", f"pg={reachable}", f"gone={unreachable}"]
    with config.open("a", encoding="utf-8") as toml:
        toml.write(f"\n[federation]\nmembers = {members!r}\ntimeout = 20\n".replace("'", '"'))
        toml.write("[store.postgres]\nretry_seconds = 0\n")  # the refused member fails at once
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWRIGHT_")}
    command = [sys.executable, "-m", "ragwright", "serve", "--config", str(config),
               "--port", str(port), "--log-format", "text"]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    log: list[str] = []
    assert server.stderr is not None
    stderr = server.stderr

    def read() -> None:
        for line in stderr:
            log.append(line)
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    shown: list[Any] = []
    try:
        wait_for(lines, "Application startup complete")
        base = f"http://127.0.0.1:{port}"
        for headers in keys.values():
            described = httpx.get(f"{base}/v1/federation", headers=headers, timeout=60)
            found = httpx.post(
                f"{base}/v1/search", json={"query": "key rotation"}, headers=headers, timeout=60
            )
            assert found.status_code == 200, found.text
            shown += [described.text, found.json()["warnings"]]
        locations = {m["name"]: m["location"] for m in described.json()["members"]}
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert locations["gone"] == "postgresql://rw:***@127.0.0.1:1/kb?password=***"
    assert "&password=***&sslpassword=***" in locations["pg"]
    assert any("index gone is left out" in w for w in shown[-1])
    assert "serving a federation of team=" in "".join(log)
    everything = "".join(log) + repr(shown)
    assert not [secret for secret in SECRETS if secret in everything], everything
