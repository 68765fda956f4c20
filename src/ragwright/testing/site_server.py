"""A website on loopback for tests and benchmarks of the website source: pages by path, ETags
from their bytes (a matching ``If-None-Match`` answers 304), and a log of every answer, so a
test can prove which pages were transferred.

    with serve_site(Site()) as site:
        site.html("/", '<a href="/a.html">a</a>')
        ...  # WebsiteSource(site.url + "/")
        site.answered(304)
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Site:
    """Pages by path: (content type, body). ``log`` holds (path, status) of every answer;
    ``delay`` slows each page down; ``failing`` paths answer 500."""

    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    log: list[tuple[str, int]] = field(default_factory=list)
    delay: float = 0.0
    failing: set[str] = field(default_factory=set)
    #: Paths answered with a 301 to another path.
    redirects: dict[str, str] = field(default_factory=dict)
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
    if path in site.redirects:
        return 301, {"Location": site.redirects[path]}, b""
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
