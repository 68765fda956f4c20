"""The website source (``type = "website"``): a crawl of one host from ``url`` and its
sitemaps, honouring robots.txt, within depth, page and size limits.

Each page is asked for conditionally (``If-None-Match`` with its ETag, ``If-Modified-Since``
with its ``Last-Modified``, both kept in the checkpoint with the page's links), so an unchanged
page answers 304 with no body and its links are followed from the checkpoint: a sync of an
unchanged site transfers no page. A page that answers 404 or 410 is gone; any other failure
(5xx, a timeout, a page over ``max_bytes``) is reported and makes the listing partial, as does
reaching ``max_pages``: nothing is pruned from a partial crawl. Pages beyond ``max_depth``
links from the start are not part of the site as configured.

Settings: ``url`` (required), ``max_depth`` (3), ``max_pages`` (1000), ``max_bytes``
(5 MB), ``timeout`` seconds (30), ``sitemaps`` (true: ``/sitemap.xml`` and those robots.txt
names), ``principals`` (who may read every page, kept as document metadata).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from collections.abc import Iterator
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from ragwright.errors import ConfigError, SourceError
from ragwright.parsers._html_depth import MAX_DEPTH, deeper_than
from ragwright.ports import Checkpoint, ItemRecord, ListingOutcome, SourceItem
from ragwright.sources.settings import SourceSettings

USER_AGENT = "ragwright"
_LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.IGNORECASE)
#: The parser a page is read with, by its content type.
_NAMES = {"text/html": "page.html", "text/markdown": "page.md", "text/plain": "page.txt"}


class _Gone(Exception):
    """The page answered 404 or 410."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class WebsiteSource:
    def __init__(
        self,
        url: str,
        *,
        max_depth: int = 3,
        max_pages: int = 1000,
        max_bytes: int = 5 * 1024 * 1024,
        timeout: float = 30.0,
        sitemaps: bool = True,
        principals: tuple[str, ...] = (),
        client: httpx.Client | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ConfigError(f"website url {url!r}: give an http:// or https:// URL")
        self.start = urldefrag(url)[0]
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.max_depth, self.max_pages, self.max_bytes = max_depth, max_pages, max_bytes
        self.sitemaps = sitemaps
        self.principals = principals
        self.client = client or httpx.Client(
            timeout=timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=False
        )
        self._bodies: dict[str, bytes] = {}

    @property
    def scopes(self) -> tuple[str, ...]:
        """The crawl stays on one host: its pages' document sources all start so."""
        return (self.origin + "/",)

    def close(self) -> None:
        self.client.close()

    # -- listing ----------------------------------------------------------------------------

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        robots = self._robots()
        queue: deque[tuple[str, int]] = deque([(self.start, 0)])
        queue.extend((url, 0) for url in self._sitemap_urls(robots))
        queued = {url for url, _ in queue}
        pages = 0
        while queue:
            url, depth = queue.popleft()
            self._bodies.clear()  # the last page's body was fetched (or not needed) by now
            if not robots.can_fetch(USER_AGENT, url):
                continue
            if pages >= self.max_pages:
                outcome.complete = False
                outcome.failures.append((url, f"not crawled: max_pages {self.max_pages} reached"))
                break
            pages += 1
            try:
                found = self._page(url, checkpoint.items.get(url))
            except _Gone as gone:
                if url == self.start:  # a wrong url, not a deleted page: delete nothing
                    outcome.complete = False
                    outcome.failures.append(
                        (url, f"the start page answered HTTP {gone.status}: check the url")
                    )
                continue
            except (SourceError, httpx.HTTPError) as error:
                outcome.failures.append((url, str(error) or type(error).__name__))
                continue
            if found is None:  # a type no parser reads, or a redirect elsewhere
                continue
            item, links = found
            if depth < self.max_depth:
                for link in links:
                    if link not in queued:
                        queued.add(link)
                        queue.append((link, depth + 1))
            if item is not None:
                yield item

    def _page(
        self, url: str, record: ItemRecord | None
    ) -> tuple[SourceItem | None, list[str]] | None:
        """The page's item and links (from the checkpoint when it answers 304)."""
        state = json.loads(record.state) if record is not None and record.state else {}
        headers = {}
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]
        with self.client.stream("GET", url, headers=headers) as response:
            status = response.status_code
            if status == 304 and record is not None:
                item = self._item(url, record.version, state.get("name", "page.html"), state)
                return item, list(state.get("links", []))
            if status in {404, 410}:
                raise _Gone(status)
            if status in {301, 302, 303, 307, 308}:
                target = self._link(url, response.headers.get("location", ""))
                return (None, [target]) if target else None
            if status != 200:
                raise SourceError(f"{url} answered HTTP {status}")
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            name = _NAMES.get(kind)
            if name is None:
                return None
            body = self._read(response, url)
        links = self._links(url, body) if name == "page.html" else []
        etag = response.headers.get("etag")
        modified = response.headers.get("last-modified")
        version = etag or modified or hashlib.sha256(body).hexdigest()
        state = {"etag": etag, "last_modified": modified, "links": links, "name": name}
        self._bodies[url] = body
        return self._item(url, version, name, state), links

    def _item(self, url: str, version: str, name: str, state: dict[str, object]) -> SourceItem:
        return SourceItem(
            key=url,
            version=version,
            document_source=url,
            name=name,
            principals=self.principals,
            metadata={"url": url},
            state=json.dumps(state, sort_keys=True),
        )

    def _read(self, response: httpx.Response, url: str) -> bytes:
        body = bytearray()
        for part in response.iter_bytes():
            body.extend(part)
            if len(body) > self.max_bytes:
                raise SourceError(f"{url} is larger than max_bytes ({self.max_bytes:,})")
        return bytes(body)

    def _links(self, url: str, body: bytes) -> list[str]:
        from selectolax.lexbor import LexborHTMLParser  # a dependency, but a heavy import

        text = body.decode("utf-8", errors="replace")
        if deeper_than(text) is not None:
            # The tree builder's time grows with the square of the depth (a 1 MB page of
            # nested tags: 47 s); the HTML parser refuses such a page, and so does the crawl.
            raise SourceError(
                f"{url} nests HTML elements more than {MAX_DEPTH:,} deep: not read, its links "
                "not followed"
            )
        tree = LexborHTMLParser(text)
        found: list[str] = []
        for anchor in tree.css("a[href]"):
            link = self._link(url, anchor.attributes.get("href") or "")
            if link and link not in found:
                found.append(link)
        return found

    def _link(self, base: str, href: str) -> str | None:
        """``href`` as an absolute URL on this site (no fragment), or None."""
        if not href:
            return None
        link = urldefrag(urljoin(base, href.strip()))[0]
        parts = urlsplit(link)
        return link if f"{parts.scheme}://{parts.netloc}" == self.origin else None

    # -- robots.txt and sitemaps ------------------------------------------------------------

    def _robots(self) -> RobotFileParser:
        robots = RobotFileParser()
        try:
            response = self.client.get(f"{self.origin}/robots.txt")
        except httpx.HTTPError as error:
            raise SourceError(f"{self.origin}/robots.txt could not be read: {error}") from error
        if response.status_code >= 500:
            # What may be crawled is unknown: nothing is, and nothing is pruned.
            raise SourceError(f"{self.origin}/robots.txt answered HTTP {response.status_code}")
        lines = response.text.splitlines() if response.status_code == 200 else []
        robots.parse(lines)
        return robots

    def _sitemap_urls(self, robots: RobotFileParser) -> list[str]:
        if not self.sitemaps:
            return []
        maps = [f"{self.origin}/sitemap.xml", *(robots.site_maps() or [])]
        urls: list[str] = []
        seen: set[str] = set()
        while maps and len(seen) < 50:  # a sitemap index names sitemaps; a bound on them
            sitemap = maps.pop(0)
            if sitemap in seen or self._link(sitemap, sitemap) is None:
                continue
            seen.add(sitemap)
            try:
                response = self.client.get(sitemap)
            except httpx.HTTPError:
                continue
            if response.status_code != 200 or len(response.content) > self.max_bytes:
                continue
            for loc in _LOC.findall(response.text):
                link = self._link(sitemap, loc)
                if link is None:
                    continue
                (maps if link.endswith(".xml") else urls).append(link)
        return urls

    def fetch(self, item: SourceItem) -> bytes:
        body = self._bodies.pop(item.key, None)
        if body is not None:
            return body
        with self.client.stream("GET", item.key) as response:
            if response.status_code != 200:
                raise SourceError(f"{item.key} answered HTTP {response.status_code}")
            return self._read(response, item.key)


def open_website(settings: SourceSettings) -> WebsiteSource:
    return WebsiteSource(
        settings.required("url"),
        max_depth=settings.integer("max_depth", 3),
        max_pages=settings.integer("max_pages", 1000, minimum=1),
        max_bytes=settings.integer("max_bytes", 5 * 1024 * 1024, minimum=1),
        timeout=float(settings.integer("timeout", 30, minimum=1)),
        sitemaps=settings.boolean("sitemaps", True),
        principals=tuple(settings.strings("principals")),
    )
