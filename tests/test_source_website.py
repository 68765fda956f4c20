"""The website source against a loopback site: a crawl within one host, robots.txt and the
sitemap honoured, the depth limit kept; an unchanged site answers only 304s; an update, a
delete, a failing page (nothing pruned), and a `ragwright sync run` killed midway and rerun."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.sources.website import WebsiteSource
from ragwright.testing import HashingEmbedder
from sync_helpers import Site, documents, serve_site, sync_command, sync_environment, wait_for

PAGES = ["/", "/a.html", "/b.html", "/notes.txt", "/orphan.html", "/d1.html", "/d2.html"]


def build(site: Site) -> None:
    site.pages["/robots.txt"] = ("text/plain", b"User-agent: *\nDisallow: /private/\n")
    site.html(
        "/",
        '<h1>Home</h1><p>Welcome aboard.</p><a href="/a.html">a</a> <a href="b.html#top">b</a>'
        ' <a href="/private/secret.html">secret</a> <a href="https://elsewhere.test/x">out</a>'
        ' <a href="/notes.txt">notes</a> <a href="/d1.html">deep</a>',
    )
    site.html("/a.html", "<h1>Alpha</h1><p>Amber coral reefs.</p>")
    site.html("/b.html", "<h1>Beta</h1><p>Basalt cliffs.</p>")
    site.pages["/notes.txt"] = ("text/plain", b"Plain notes about the harbour.")
    site.html("/private/secret.html", "<p>Never crawled.</p>")
    site.html("/orphan.html", "<p>Only the sitemap names me.</p>")
    site.html("/d1.html", '<p>One.</p><a href="/d2.html">on</a>')
    site.html("/d2.html", '<p>Two.</p><a href="/d3.html">on</a>')
    site.html("/d3.html", "<p>Three: beyond max_depth 2.</p>")
    sitemap = "<urlset><url><loc>{}/orphan.html</loc></url></urlset>"
    site.pages["/sitemap.xml"] = ("application/xml", sitemap.format(site.url).encode())


@pytest.fixture
def site() -> Iterator[Site]:
    with serve_site(Site()) as served:
        build(served)
        yield served


def sync(kb: Index, site: Site, max_pages: int = 1000) -> SyncReport:
    source = WebsiteSource(site.url + "/", max_depth=2, max_pages=max_pages, principals=("team",))
    try:
        return kb.sync_source("site", source)
    finally:
        source.close()


def test_crawl_update_delete_and_an_unchanged_site_answers_only_304s(
    site: Site, tmp_path: Path
) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        first = sync(kb, site)
        assert sorted(first.added) == sorted(site.url + p for p in PAGES)
        assert not first.failed and first.complete
        document = kb.documents.get(site.url + "/a.html")
        assert document is not None and "Amber coral" in document.content
        assert document.principals == ("team",)
        assert document.metadata["sync_source"] == "site"

        mark = len(site.log)
        again = sync(kb, site)
        assert (again.added, again.updated, again.removed) == ([], [], [])
        assert again.unchanged == len(PAGES)
        assert site.answered(200, mark) == []
        assert sorted(site.answered(304, mark)) == sorted(PAGES)

        site.html("/a.html", "<h1>Alpha</h1><p>Amber coral reefs, now with kelp.</p>")
        del site.pages["/b.html"]
        mark = len(site.log)
        changed = sync(kb, site)
        assert changed.updated == [site.url + "/a.html"]
        assert changed.removed == [site.url + "/b.html"]
        assert site.answered(200, mark) == ["/a.html"]
        assert kb.documents.get(site.url + "/b.html") is None
        assert sorted(d.source for d in kb.documents.list()) == sorted(
            site.url + p for p in PAGES if p != "/b.html"
        )


def test_a_failing_page_is_reported_and_nothing_is_pruned(site: Site, tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        sync(kb, site)
        site.failing.add("/a.html")
        del site.pages["/b.html"]
        report = sync(kb, site)
        assert [f.source for f in report.failed] == [site.url + "/a.html"]
        assert not report.complete and report.removed == []
        assert kb.documents.get(site.url + "/b.html") is not None  # a partial crawl deletes nothing
        site.failing.clear()
        assert sync(kb, site).removed == [site.url + "/b.html"]


def test_a_start_page_that_answers_404_fails_the_crawl_and_deletes_nothing(
    site: Site, tmp_path: Path
) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        sync(kb, site)
        del site.pages["/"]  # a typo'd or moved start url looks the same
        report = sync(kb, site)
        assert [(f.source, f.reason) for f in report.failed] == [
            (site.url + "/", "the start page answered HTTP 404: check the url")
        ]
        assert not report.complete and report.removed == []
        assert len(kb.documents.list()) == len(PAGES)


def test_the_page_limit_makes_the_crawl_partial(site: Site, tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        sync(kb, site)
        report = sync(kb, site, max_pages=3)
        assert not report.complete and report.removed == []
        assert len(kb.documents.list()) == len(PAGES)


@pytest.mark.slow
def test_a_sync_killed_midway_resumes_and_converges(site: Site, tmp_path: Path) -> None:
    for number in range(30):
        site.html(f"/p{number}.html", f"<p>Page {number} about fjord {number}.</p>")
    links = "".join(f'<a href="/p{n}.html">{n}</a>' for n in range(30))
    site.html("/", f"<h1>Home</h1>{links}")
    config = tmp_path / "ragwright.toml"
    config.write_text(f'[sources.site]\ntype = "website"\nurl = "{site.url}/"\nbatch = 3\n')
    site.delay = 0.1
    command = [*sync_command("run", "--index", "kb", "--embedder", "hashing")]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=sync_environment(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert wait_for(lambda: len(site.answered(200)) >= 16, timeout=90)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), create=False) as kb:
        committed = len(kb.sync_checkpoint("site").items)
    assert 3 <= committed < 32  # some batches were committed, not all
    site.delay = 0.0
    mark = len(site.log)
    rerun = subprocess.run(
        command, cwd=tmp_path, env=sync_environment(), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    paths = ["/", "/orphan.html", *(f"/p{n}.html" for n in range(30))]
    expected = {site.url + path for path in paths}
    state = documents(tmp_path / "kb")
    assert set(state) == expected
    # What the killed run checkpointed was asked for conditionally and not fetched again.
    assert len(site.answered(304, mark)) >= committed - 1


def test_a_robots_txt_that_fails_stops_the_sync_and_prunes_nothing(
    site: Site, tmp_path: Path
) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        sync(kb, site)
        site.failing.add("/robots.txt")
        del site.pages["/a.html"]
        mark = len(site.log)
        report = sync(kb, site)
        assert not report.complete and report.removed == []
        assert "robots.txt answered HTTP 500" in report.failed[0].reason
        assert site.answered(200, mark) == site.answered(304, mark) == []  # nothing crawled
        assert len(kb.documents.list()) == len(PAGES)


def test_an_oversized_page_fails_and_a_redirect_within_the_host_is_followed(
    site: Site, tmp_path: Path
) -> None:
    site.html("/a.html", "<p>" + "kelp " * 400 + "</p>")
    site.redirects = {"/b.html": "/moved.html"}
    site.html("/moved.html", "<p>Moved here.</p>")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        source = WebsiteSource(site.url + "/", max_depth=2, max_bytes=1000)
        try:
            report = kb.sync_source("site", source)
        finally:
            source.close()
        assert [f.source for f in report.failed] == [site.url + "/a.html"]
        assert "max_bytes" in report.failed[0].reason
        assert kb.documents.get(site.url + "/moved.html") is not None
        assert kb.documents.get(site.url + "/b.html") is None


def test_a_page_nested_past_the_html_limit_fails_and_the_crawl_goes_on(
    site: Site, tmp_path: Path
) -> None:
    # Reading its links would cost the crawl time that grows with the square of the depth.
    link = '<a href="/only-from-a.html">on</a>'
    site.html("/a.html", "<div>" * 5_000 + link + "</div>" * 5_000)
    site.html("/only-from-a.html", "<p>Reached through a.html alone.</p>")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        report = sync(kb, site)
        assert [f.source for f in report.failed] == [site.url + "/a.html"]
        assert "not read" in report.failed[0].reason
        assert kb.documents.get(site.url + "/only-from-a.html") is None  # its links unread
        assert kb.documents.get(site.url + "/b.html") is not None  # the rest was crawled
