"""Hostile requests against every route of the HTTP API, over raw sockets to a real server on
loopback: NUL and backslashes in paths, query parameters, JSON bodies, filters, upload names
and headers; bytes that are not UTF-8, JSON or HTTP; and idle, half-sent and slow connections.
Whatever comes in, no answer is a 500, and every error is the JSON problem shape
``{"error": {"code", "message", "status"}}`` with the status it was sent with."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from cli_helpers import runner
from ragwright.cli import app as cli
from ragwright.config import load_config
from ragwright.server import ServerSettings, create_app
from raw_http import address_of, connection, read_until_closed, request_bytes
from server_helpers import build_index, serve

#: Path segments, already percent-encoded where a raw byte cannot go in a request line.
SEGMENTS = [
    "%00", "a%00b", "\\", "%5C", "..%5C..%5Cetc%5Cpasswd", "C:%5Cguide.md", "%5C%5Chost%5Cshare",
    "..%2F..%2Fetc", "%ED%A0%80", "%FF%FE", "%C3%A9", "%E2%80%AE", "%0A", "x" * 3000,
]  # fmt: skip
#: Query parameter values, before percent-encoding.
QUERY_VALUES = [
    "\x00", "a\x00b", '"ye\x00ar" exists', 'year = "\x00"', '"a\\\\b" exists', '"a\\\\b" = 1',
    "\\", "year = " + "9" * 5000, "-1", "99999999999999999999", "1e999", "nan", "é", "x" * 3000,
]  # fmt: skip
#: JSON values for a body's fields (strings, numbers and shapes of every wrong kind).
JSON_VALUES: list[Any] = [
    "\x00", "a\x00b", "\\", "a\\b", '"ye\x00ar" exists', '"a\\\\b" exists', "\ud800",
    "year = " + "9" * 5000, -1, 0, 10**30, 1e308, float("nan"), float("inf"), True, None, [],
    {}, [["x"]], {"\x00": "\\"},
]  # fmt: skip
#: Whole bodies sent as application/json.
RAW_BODIES = [
    b"", b"\x00", b"\xff\xfe\x00", b"[" * 100_000, b'{"query": "x"', b'{"query": "\xed\xa0\x80"}',
    b'"\\u0000"', b'{"query": "\\u0000", "filter": "\\"a\\\\u0000\\" exists"}', b"null", b"1e999",
]  # fmt: skip
#: Upload file names (raw bytes go into the multipart header as they are).
UPLOAD_NAMES = [
    b"a\x00b.md", b"..\\..\\evil.md", b"C:\\evil.md", b"\\\\host\\share\\x.md", b"%00.md", b"",
    b"x" * 300 + b".md", b"\xff.md", b"\\", b"dir/../../up.md",
]  # fmt: skip
#: POST routes whose body would start real work when it is valid: only malformed bodies.
HEAVY = re.compile(r"/graph/build$")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[tuple[str, int], dict]]:
    """A server with an admin key and a key bound to principals, short connection deadlines,
    and the OpenAPI description of its routes."""
    folder = tmp_path_factory.mktemp("hostile")
    config = folder / "ragwright.toml"
    keys = {}
    for name, flags in (("admin", ["--scope", "write"]), ("reader", ["--principal", "g:x"])):
        added = runner.invoke(cli, ["keys", "add", name, *flags, "--config", str(config)])
        assert added.exit_code == 0, added.output
        keys[name] = added.stdout.strip().splitlines()[-1]
    settings = ServerSettings.from_config(load_config(config))
    settings = ServerSettings(**{**settings.__dict__, "header_timeout": 1, "body_timeout": 1})
    with build_index(folder) as index, serve(index, settings) as url:
        spec = create_app(index, settings, host="127.0.0.1").openapi()
        yield address_of(url), {"keys": keys, "spec": spec}


def exchange(address: tuple[str, int], raw: bytes) -> bytes:
    with connection(address) as sock:
        sock.sendall(raw)
        return read_until_closed(sock)


def problems_in(response: bytes, what: str) -> list[str]:
    """What is wrong with one answer: a 500 (any 5xx but a deliberate 503), or an error that
    is not the JSON problem shape with its own status."""
    if not response:
        return [f"{what}: closed without an answer"]
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    found = []
    if status >= 500 and status != 503:
        found.append(f"{what}: {status} {body[:300]!r}")
    if status >= 400:
        try:
            error = json.loads(body)["error"]
            assert {"code", "message", "status"} <= set(error) and error["status"] == status
            assert b"content-type: application/json" in head.lower()
        except (ValueError, KeyError, TypeError, AssertionError):
            found.append(f"{what}: {status} is not a problem response: {response[:300]!r}")
    return found


def routes(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            yield method.upper(), path, operation


def filled(path: str, hostile: str | None = None, name: str | None = None) -> str:
    """``path`` with its parameters given plain values, and ``name`` given ``hostile``."""

    def value(match: re.Match[str]) -> str:
        return hostile if match[1] == name and hostile is not None else "default"

    return re.sub(r"\{(\w+)\}", value, path)


def json_bodies(operation: dict[str, Any], spec: dict[str, Any]) -> Iterator[Any]:
    """A body per field and hostile value, the other fields left out."""
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema", {})
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    fields = list(schema.get("properties", {}))
    required = {name: "install" for name in schema.get("required", [])}
    for name in fields:
        for value in JSON_VALUES:
            yield {**required, name: value}


def multipart(name: bytes, content: bytes) -> tuple[bytes, str]:
    boundary = "hostileboundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="'.encode()
        + name
        + b'"\r\nContent-Type: text/markdown\r\n\r\n'
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def test_no_hostile_request_gets_a_500_or_an_error_outside_the_problem_shape(
    server: tuple[tuple[str, int], dict],
) -> None:
    address, context = server
    spec, keys = context["spec"], context["keys"]
    admin = {"Authorization": f"Bearer {keys['admin']}", "Connection": "close"}
    sent: list[tuple[str, bytes]] = []
    for method, path, operation in routes(spec):
        parameters = operation.get("parameters", [])
        for parameter in (p for p in parameters if p["in"] == "path"):
            for segment in SEGMENTS:
                target = filled(path, segment, parameter["name"])
                sent.append((f"{method} {target[:80]}", request_bytes(method, target, **admin)))
        for parameter in (p for p in parameters if p["in"] == "query"):
            for value in QUERY_VALUES:
                target = f"{filled(path)}?{parameter['name']}={quote(value)}"
                sent.append((f"{method} {target[:80]}", request_bytes(method, target, **admin)))
        if method == "POST" and "application/json" in operation.get("requestBody", {}).get(
            "content", {}
        ):
            target = filled(path)
            for raw in RAW_BODIES:
                sent.append(
                    (f"{method} {target} {raw[:40]!r}", request_bytes(method, target, raw, **admin))
                )
            if not HEAVY.search(path):
                for body in json_bodies(operation, spec):
                    raw = json.dumps(body, allow_nan=True).encode()
                    sent.append(
                        (
                            f"{method} {target} {raw[:80]!r}",
                            request_bytes(method, target, raw, **admin),
                        )
                    )
    for name in UPLOAD_NAMES:
        body, content_type = multipart(name, b"# Hostile\n\nA\x00B and C:\\path\n")
        raw = request_bytes("POST", "/v1/documents", body, Content_Type=content_type, **admin)
        sent.append((f"upload {name[:40]!r}", raw))
    found = [problem for what, raw in sent for problem in problems_in(exchange(address, raw), what)]
    assert len(sent) > 1000
    assert not found, "\n".join(found[:40])


@pytest.mark.parametrize(
    "raw",
    [
        b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \x00\r\n\r\n",
        b"GET /v1/st\x00ats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-\\: a\\b\r\n\r\n",
        b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 70_000 + b"\r\n\r\n",
        b"\x00\x01\x02 not http at all\r\n\r\n",
        b"GET /v1/stats HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ],
)
def test_bytes_that_are_not_http_get_a_problem_response(
    server: tuple[tuple[str, int], dict], raw: bytes
) -> None:
    address, _ = server
    response = exchange(address, raw)
    assert problems_in(response, repr(raw[:60])) == []
    assert int(response.split(b" ", 2)[1]) < 500


@pytest.mark.parametrize(
    "expression", ['"ye\x00ar" exists', 'lang = "\\\\"', '"a\\\\b" exists', "year = " + "9" * 40]
)
def test_a_key_bound_to_principals_and_no_key_get_problem_responses_too(
    server: tuple[tuple[str, int], dict], expression: str
) -> None:
    address, context = server
    for headers in ({"Authorization": f"Bearer {context['keys']['reader']}"}, {}):
        body = json.dumps({"query": "install", "filter": expression}).encode()
        for raw in (
            request_bytes("POST", "/v1/search", body, Connection="close", **headers),
            request_bytes(
                "POST",
                "/v1/ask",
                body.replace(b'"query"', b'"question"'),
                Connection="close",
                **headers,
            ),
            request_bytes(
                "GET", f"/v1/documents?filter={quote(expression)}", Connection="close", **headers
            ),
        ):
            assert problems_in(exchange(address, raw), repr(raw[:60])) == []


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # idle: nothing at all
        b"GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # half-sent headers
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 40\r\n\r\n{"query": "\\\\ \\u0000',  # half-sent body, NUL, backslash
    ],
)
def test_idle_and_half_sent_connections_are_closed_with_nothing_or_a_408(
    server: tuple[tuple[str, int], dict], raw: bytes
) -> None:
    address, _ = server
    response = exchange(address, raw)
    if raw:
        assert response.startswith(b"HTTP/1.1 408"), response[:200]
        assert problems_in(response, repr(raw[:60])) == []
    else:
        assert response == b""


def test_the_server_still_answers_after_all_of_it(server: tuple[tuple[str, int], dict]) -> None:
    address, context = server
    admin = {"Authorization": f"Bearer {context['keys']['admin']}", "Connection": "close"}
    body = json.dumps({"query": "install linux"}).encode()
    response = exchange(address, request_bytes("POST", "/v1/search", body, **admin))
    assert response.startswith(b"HTTP/1.1 200")
    assert json.loads(response.partition(b"\r\n\r\n")[2])["hits"]
