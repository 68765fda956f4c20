"""Helpers of the sync-source tests: a loopback website that counts what it answers, the
`ragwright sync` command run as a real process, and an index's documents as a comparable
state."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ragwright import Index
from ragwright.testing import HashingEmbedder


@dataclass
class Site:
    """Pages by path: (content type, body). ``log`` holds (path, status) of every answer;
    ``delay`` slows each page down; ``failing`` paths answer 500."""

    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    log: list[tuple[str, int]] = field(default_factory=list)
    delay: float = 0.0
    failing: set[str] = field(default_factory=set)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def html(self, path: str, text: str) -> None:
        self.pages[path] = ("text/html; charset=utf-8", text.encode())

    def statuses(self, since: int = 0) -> list[tuple[str, int]]:
        with self.lock:
            return list(self.log[since:])

    def answered(self, status: int, since: int = 0) -> list[str]:
        """The page paths (not robots.txt or sitemaps) answered ``status`` since ``since``."""
        meta = {"/robots.txt", "/sitemap.xml"}
        return [p for p, s in self.statuses(since) if s == status and p not in meta]


@contextmanager
def serve_site(site: Site) -> Iterator[Site]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            status, headers, body = answer(site, path, self.headers.get("If-None-Match"))
            with site.lock:
                site.log.append((path, status))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


def answer(site: Site, path: str, if_none_match: str | None) -> tuple[int, dict[str, str], bytes]:
    if path in site.failing:
        return 500, {}, b"broken"
    found = site.pages.get(path)
    if found is None:
        return 404, {}, b"not found"
    kind, body = found
    if site.delay and path not in {"/robots.txt", "/sitemap.xml"}:
        time.sleep(site.delay)
    etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
    if if_none_match == etag:
        return 304, {"ETag": etag}, b""
    return 200, {"Content-Type": kind, "ETag": etag}, body


def run_sync(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``ragwright sync ARGS`` in ``folder`` (its ragwright.toml), with the hashing embedder."""
    return subprocess.run(
        sync_command(*args), cwd=folder, env=sync_environment(), capture_output=True,
        text=True, timeout=timeout,
    )  # fmt: skip


def sync_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragwright", "sync", *args]


def sync_environment(**extra: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "RAGWRIGHT_CONFIG"}
    environment.update(extra)
    return environment


def documents(location: Path | str) -> dict[str, str]:
    """Source → content of every document in the index."""
    with Index(location, embedder=HashingEmbedder(), create=False) as kb:
        found = {}
        for info in kb.documents():
            document = kb.document(info.source)
            assert document is not None
            found[info.source] = document.content
        return found


def wait_for(condition: object, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.05)
    return False
