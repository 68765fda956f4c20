"""A store whose server does not answer is `StoreUnavailable`, and the HTTP API answers it as
503 ``store_unavailable`` (issue 31: it was a JSON 500 ``ragwright_error``), not as a failure
of the request; once the server is back the same request succeeds."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from pg_server import create_database, start_server
from ragwright import Index, StoreUnavailable
from ragwright.config import load_config
from ragwright.server.problems import status_of
from ragwright.stores.postgres import PostgresBackend
from ragwright.testing import HashingEmbedder
from server_helpers import serve
from test_postgres_store import _kill, _restart


def test_an_unreachable_server_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match="cannot connect"):
        PostgresBackend("postgresql://127.0.0.1:9/nothing", retry_seconds=0.2, connect_timeout=0.2)
    assert status_of(StoreUnavailable("down")) == (503, "store_unavailable")


def _answered(client: httpx.Client, search: dict[str, str], seconds: float = 60) -> int:
    """The status of the search once it is not 503 any more (or the last 503)."""
    deadline = time.monotonic() + seconds
    while True:
        status = client.post("/v1/search", json=search).status_code
        if status != 503 or time.monotonic() > deadline:
            return status
        time.sleep(0.5)


def test_search_answers_503_while_the_database_is_down(tmp_path: Path) -> None:
    server = start_server("rwsu")  # its own server: this test kills it
    try:
        url = create_database(server)
        config_file = tmp_path / "ragwright.toml"
        config_file.write_text("[store.postgres]\nretry_seconds = 0.5\nconnect_timeout = 1\n")
        config = load_config(config_file)
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        (corpus / "a.txt").write_text("Planets move in orbits.")
        with Index(url, embedder=HashingEmbedder(), config=config) as index:
            assert index.ingest([corpus]).ok
            with serve(index) as base, httpx.Client(base_url=base, timeout=30) as client:
                search = {"query": "orbits", "mode": "vector"}
                assert client.post("/v1/search", json=search).status_code == 200
                _kill(server)
                down = client.post("/v1/search", json={**search, "query": "planets"})
                assert down.status_code == 503, down.text
                assert down.json()["error"]["code"] == "store_unavailable"
                _restart(server)
                assert _answered(client, search) == 200  # the pool reconnects in a while
    finally:
        server.cleanup()
