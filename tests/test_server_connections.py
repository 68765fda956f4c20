"""Slow and surplus connections, against a real server on loopback through raw sockets: a
connection that sends nothing, half a request's headers, headers a byte at a time, or half a
body is cut off after its deadline (``header_timeout``, ``body_timeout``); one beyond
``max_connections`` is answered 503 at once; ordinary requests, kept-alive connections and
bodies that arrive slowly but steadily still work. Deadlines are about a second, so nothing here
waits long; no test measures time: a socket timeout well past the deadline only bounds a wait."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from ragwright import Index
from ragwright.config import Config
from ragwright.server import ServerSettings
from ragwright.server.settings import ConnectionLimits
from raw_http import (
    BOUND,
    address_of,
    connection,
    read_response,
    read_until_closed,
    request_bytes,
    status_and_error,
)
from server_helpers import build_index, free_port, serve, serve_logged, wait_for

FAST = ServerSettings(header_timeout=1, body_timeout=1, max_connections=50)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with build_index(tmp_path_factory.mktemp("connections")) as index:
        yield index


@pytest.fixture(scope="module")
def fast(index: Index) -> Iterator[tuple[str, int]]:
    with serve(index, FAST) as url:
        yield address_of(url)


def test_a_connection_that_sends_nothing_is_closed(fast: tuple[str, int]) -> None:
    with connection(fast) as sock:
        assert read_until_closed(sock) == b""  # closed without an answer: nothing was asked


def test_half_sent_headers_are_answered_408_and_closed(fast: tuple[str, int]) -> None:
    with connection(fast) as sock:
        sock.sendall(b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        status, error = status_and_error(read_until_closed(sock))
    assert (status, error["code"], error["status"]) == (408, "request_timeout", 408)
    assert "headers" in error["message"]


def test_headers_sent_a_byte_at_a_time_do_not_move_the_deadline(fast: tuple[str, int]) -> None:
    """A slowloris: each byte arrives well within the deadline, the headers never end."""
    endless = b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Padding: " + b"a" * 10_000
    with connection(fast) as sock:
        sock.settimeout(0.2)
        received = b""
        give_up = time.monotonic() + BOUND  # bounds the test where the server never ends it
        for byte in endless:
            if time.monotonic() > give_up:
                break
            try:
                sock.sendall(bytes([byte]))
                received += sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if received:
                break
        sock.settimeout(BOUND)
        received += read_until_closed(sock)
    assert status_and_error(received)[0] == 408


@pytest.mark.parametrize(
    ("path", "content_type", "body"),
    [
        ("/v1/search", "application/json", json.dumps({"query": "install linux"}).encode()),
        ("/v1/documents", "multipart/form-data; boundary=xx", b"--xx\r\n" + b"x" * 200),
    ],
)
def test_a_body_that_stops_arriving_is_answered_408_and_logged_so(
    index: Index, path: str, content_type: str, body: bytes
) -> None:
    with serve_logged(index, FAST) as (url, records), connection(address_of(url)) as sock:
        whole = request_bytes("POST", path, body, Content_Type=content_type)
        sock.sendall(whole[: -len(body) // 2])
        status, error = status_and_error(read_until_closed(sock))
    assert (status, error["code"]) == (408, "request_timeout")
    assert "body" in error["message"]
    logged = [r.__dict__["fields"] for r in records if r.__dict__.get("fields")]
    assert [f["status"] for f in logged if f["event"] == "request"] == [408]
    assert not [r for r in records if r.levelname == "ERROR"]  # a slow client is no failure


def test_a_body_arriving_slowly_but_steadily_is_served(index: Index) -> None:
    """Each part within the body deadline, the whole well past it, above the minimum rate."""
    body = json.dumps({"query": "install linux", "top_k": 3}).encode()
    settings = ServerSettings(header_timeout=5, body_timeout=2, body_min_rate=5)
    with serve(index, settings) as url, connection(address_of(url)) as sock:
        sock.sendall(request_bytes("POST", "/v1/search", body, Connection="close")[: -len(body)])
        for start in range(0, len(body), 4):
            time.sleep(0.3)
            sock.sendall(body[start : start + 4])
        response = read_until_closed(sock)
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    assert json.loads(response.partition(b"\r\n\r\n")[2])["hits"]


def test_a_body_dripping_under_the_minimum_rate_is_answered_408(index: Index) -> None:
    """A byte before each pause ends never trips the body deadline; the average rate does,
    long before the body is complete (2,000 bytes at 4 a second: 500 s)."""
    body = b'{"query": "' + b"x" * 1980 + b'"}'
    settings = ServerSettings(header_timeout=5, body_timeout=1, body_min_rate=100)
    with serve(index, settings) as url, connection(address_of(url)) as sock:
        sock.sendall(request_bytes("POST", "/v1/search", body)[: -len(body)])
        sent = 0
        with contextlib.suppress(OSError):  # the server closes the connection under us
            while sent < 40:  # 10 s: far past the 1 s after which the rate counts
                sock.sendall(body[sent : sent + 1])
                sent += 1
                time.sleep(0.25)
        status, error = status_and_error(read_until_closed(sock))
    assert (status, error["code"]) == (408, "request_timeout")
    assert "too slowly" in error["message"] and sent < 40


def test_a_kept_alive_connection_serves_requests_then_times_out_a_half_sent_one(
    fast: tuple[str, int],
) -> None:
    with connection(fast) as sock:
        for _ in range(3):
            sock.sendall(request_bytes("GET", "/v1/stats"))
            assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /v1/stats HTTP/1.1\r\n")
        assert status_and_error(read_until_closed(sock))[0] == 408


def test_ordinary_clients_are_unaffected(fast: tuple[str, int]) -> None:
    base = f"http://{fast[0]}:{fast[1]}"
    with httpx.Client(base_url=base, timeout=BOUND) as client:
        for _ in range(3):
            found = client.post("/v1/search", json={"query": "install linux"})
            assert found.status_code == 200 and found.json()["hits"]
        files = {"files": ("extra.md", b"# Extra\n\nAn uploaded note about Linux installs.\n")}
        uploaded = client.post("/v1/documents", files=files)
        assert uploaded.status_code == 200, uploaded.text


def test_a_connection_beyond_the_cap_is_answered_503_and_the_others_go_on(index: Index) -> None:
    settings = ServerSettings(header_timeout=BOUND, body_timeout=BOUND, max_connections=3)
    with serve(index, settings) as url, ExitStack() as held:
        address = address_of(url)
        open_ones = [held.enter_context(connection(address)) for _ in range(3)]
        for _ in range(2):
            with connection(address) as surplus:
                status, error = status_and_error(read_until_closed(surplus))
            assert (status, error["code"]) == (503, "too_many_connections")
        open_ones[0].sendall(request_bytes("GET", "/v1/stats"))
        assert read_response(open_ones[0]).startswith(b"HTTP/1.1 200")
        open_ones[1].close()  # a place comes free once the server sees the close
        for _ in range(50):
            answer = httpx.get(f"{url}/v1/stats", timeout=BOUND)
            if answer.status_code == 200:
                break
            assert answer.status_code == 503
            time.sleep(0.1)
        assert answer.status_code == 200


def test_serve_takes_the_limits_from_its_flags_and_the_config(tmp_path: Path) -> None:
    """``ragwright serve`` as a real process: ``--header-timeout`` on the command line and
    ``max_connections`` in [server] reach the server."""
    config = tmp_path / "ragwright.toml"
    config.write_text("[server]\nmax_connections = 1\nshutdown_timeout = 5\n", "utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWRIGHT_")}
    command = [sys.executable, "-m", "ragwright", "serve", "--index", str(tmp_path / "index"),
               "--config", str(config), "--port", str(port), "--embedder", "hashing",
               "--header-timeout", "1"]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    assert server.stderr is not None
    stderr = server.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
    try:
        wait_for(lines, "running on")  # listening: startup completes before the bind
        with connection(("127.0.0.1", port)) as first:
            with connection(("127.0.0.1", port)) as second:
                assert status_and_error(read_until_closed(second))[0] == 503
            first.sendall(b"GET /v1/stats HTTP/1.1\r\n")
            assert status_and_error(read_until_closed(first))[0] == 408
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_the_limits_are_read_from_the_server_table() -> None:
    table = {"header_timeout": 0.5, "body_timeout": 2, "max_connections": 10}
    settings = ServerSettings.from_config(Config({"server": table}))
    assert (settings.header_timeout, settings.body_timeout, settings.max_connections) == (
        0.5,
        2.0,
        10,
    )
    assert ServerSettings().connection_limits == ConnectionLimits(15.0, 30.0, 256, 500)
    rate = ServerSettings.from_config(Config({"server": {"body_min_rate": 50}})).body_min_rate
    assert rate == 50
