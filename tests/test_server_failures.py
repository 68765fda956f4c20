"""Inputs and failures the HTTP API must survive: never a plain-text 500, always the error
shape, and the keep-alive connection stays usable."""

from __future__ import annotations

import http.client
import json
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from ragwright import Index
from ragwright.ports import Vectors
from ragwright.testing import HashingEmbedder
from server_helpers import build_index, serve, serve_logged


def multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


class Connection:
    """One keep-alive HTTP/1.1 connection: `same_socket` tells whether it was ever reopened."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.http = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        self.http.connect()
        self.socket = self.http.sock

    def request(
        self, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
    ) -> tuple[int, dict[str, str], bytes]:
        self.http.request(method, path, body, {"Content-Type": content_type})
        response = self.http.getresponse()
        return response.status, dict(response.headers), response.read()

    @property
    def same_socket(self) -> bool:
        return self.http.sock is self.socket

    def close(self) -> None:
        self.http.close()


def test_an_upload_name_over_255_utf8_bytes_is_refused_and_the_connection_kept(
    tmp_path: Path,
) -> None:
    name = "é" * 200 + ".md"  # 203 characters, 403 bytes: over the file system's NAME_MAX
    with build_index(tmp_path) as index, serve(index) as url:
        connection = Connection(url)
        body, content_type = multipart(name, b"# Title\n\nText.\n")
        status, _, raw = connection.request("POST", "/v1/documents", body, content_type)
        assert status == 400
        error = json.loads(raw)["error"]
        assert error["code"] == "unsafe_filename" and "255 bytes" in error["message"]
        status, _, _ = connection.request("GET", "/healthz")
        assert status == 200 and connection.same_socket
        connection.close()


class BrokenEmbedder(HashingEmbedder):
    """An embedder with a bug: a failure that is no ragwright error."""

    def embed_query(self, text: str) -> Vectors:
        raise RuntimeError("bug in a third-party embedder")


def test_an_unexpected_error_is_problem_json_with_a_logged_request_id(tmp_path: Path) -> None:
    build_index(tmp_path).close()
    index = Index(tmp_path / "index", embedder=BrokenEmbedder())
    with index, serve_logged(index) as (url, records):
        connection = Connection(url)
        query = json.dumps({"query": "install"}).encode()
        status, headers, raw = connection.request("POST", "/v1/search", query)
        health, _, _ = connection.request("GET", "/healthz")
        assert health == 200 and connection.same_socket
        connection.close()
    assert status == 500
    assert headers["content-type"] == "application/json"
    error = json.loads(raw)["error"]
    assert error["code"] == "internal_error" and error["status"] == 500
    request_id = error["request_id"]
    assert headers["x-request-id"] == request_id and request_id in error["message"]
    assert "bug in a third-party embedder" not in error["message"]  # details stay in the log
    failed = [r for r in records if getattr(r, "fields", {}).get("request_id") == request_id]
    logged = {r.fields["event"]: r for r in failed}  # type: ignore[attr-defined]
    assert logged["request"].fields["status"] == 500  # type: ignore[attr-defined]
    assert logged["request.failed"].exc_info is not None
    assert "bug in a third-party embedder" in str(logged["request.failed"].exc_info[1])
