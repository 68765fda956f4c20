"""Raw HTTP/1.1 over a socket, for tests that send what an HTTP client library will not: half a
request, a byte at a time, NUL in a header, bytes that are not HTTP."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Long enough past a deadline of about a second that a loaded machine still sees it pass.
BOUND = 15


def address_of(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


@contextmanager
def connection(address: tuple[str, int]) -> Iterator[socket.socket]:
    with socket.create_connection(address, timeout=BOUND) as sock:
        yield sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout, BOUND
    seconds without a byte, fails the test: the server kept the connection)."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def read_response(sock: socket.socket) -> bytes:
    """One whole response on a kept-alive connection (its headers, then Content-Length bytes)."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def status_and_error(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower(), head
    return status, json.loads(body)["error"]


def request_bytes(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    headers.setdefault("Content_Type", "application/json")
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    else:
        del headers["Content_Type"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
