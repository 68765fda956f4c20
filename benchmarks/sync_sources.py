"""`ragwright sync` for the website and S3 sources: the first sync of N items, a sync with
nothing changed and one with 1% changed, each beside a baseline run in the same process.

    nice .venv/bin/python benchmarks/sync_sources.py [--items 500] [--embedder hashing|minilm]
        [--skip-website] [--skip-s3]

Website: a loopback site (`ragwright.testing.site_server`) of N pages linked from its home page;
S3: a bucket of N objects on moto's standalone server (started here on a free loopback port).
The requests each sync sends are counted at the server (website: answers by status) or at the
client (S3: GetObject calls): a sync with nothing changed must transfer no page and download no
object. The baseline is a plain download of every item with the same client (httpx GETs of
every page; boto3 list + GetObject of every object): what a sync without checkpoints would at
least cost before parsing anything.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from ragwright.embedders import create_embedder
from ragwright.index import Index
from ragwright.ports import Embedder, Source
from ragwright.sources.s3 import S3Source
from ragwright.sources.website import WebsiteSource
from ragwright.testing.site_server import Site, serve_site


def timed(work: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def row(label: str, seconds: float, items: int, baseline: float, extra: str = "") -> None:
    per_item = 1000 * seconds / items
    print(f"  {label:<26} {seconds:8.2f} s  {per_item:7.2f} ms/item  "
          f"x{seconds / baseline:6.2f} of baseline  {extra}")  # fmt: skip


def syncs(
    kb: Index,
    name: str,
    make: Callable[[], Source],
    change: Callable[[int], None],
    items: int,
    requests: Callable[[int], str],
    mark: Callable[[], int],
) -> list[tuple[str, float, str]]:
    """The first sync, an unchanged one and a 1%-changed one: (label, seconds, summary with
    what ``requests`` counted since ``mark``)."""
    out = []
    for label, changed in (("first sync", 0), ("nothing changed", 0), ("1% changed", 1)):
        if changed:
            change(max(1, items // 100))
        source = make()
        since = mark()
        try:
            report, seconds = timed(lambda s=source: kb.sync_source(name, s))  # type: ignore[misc]
        finally:
            source.close()
        summary = (
            f"added {len(report.added)} updated {len(report.updated)} "
            f"unchanged {report.unchanged} · {requests(since)}"
        )
        out.append((label, seconds, summary))
    return out


def website(root: Path, embedder: Embedder, items: int) -> None:
    with serve_site(Site()) as site:
        links = "".join(f'<a href="/p{n}.html">{n}</a>' for n in range(items))
        site.html("/", f"<h1>Home</h1>{links}")
        for n in range(items):
            site.html(f"/p{n}.html", f"<h1>Page {n}</h1><p>Harbour fjord {n} notes.</p>")
        version = [0]

        def change(count: int) -> None:
            version[0] += 1
            for n in range(count):
                site.html(f"/p{n}.html", f"<h1>Page {n}</h1><p>Edited {version[0]}.</p>")

        def make() -> Source:
            return WebsiteSource(site.url + "/", max_depth=1, max_pages=items + 10)

        def requests(since: int) -> str:
            return (
                f"pages sent 200: {len(site.answered(200, since))}, 304: "
                f"{len(site.answered(304, since))}"
            )

        with httpx.Client() as client:
            _, baseline = timed(lambda: [client.get(f"{site.url}/p{n}.html") for n in range(items)])
        print(f"website, {items} pages (+ home page); baseline: {baseline:.2f} s for plain GETs")
        with Index(root / "web", embedder=embedder) as kb:
            for label, seconds, summary in syncs(
                kb, "site", make, change, items, requests, lambda: len(site.log)
            ):
                row(label, seconds, items, baseline, summary)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def s3(root: Path, embedder: Embedder, items: int) -> None:
    import boto3

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

        def client() -> Any:
            return boto3.client(
                "s3", endpoint_url=endpoint, region_name="us-east-1",
                aws_access_key_id="bench", aws_secret_access_key="bench-secret",
            )  # fmt: skip

        admin = client()
        admin.create_bucket(Bucket="bench")
        for n in range(items):
            admin.put_object(
                Bucket="bench", Key=f"n{n:05}.md", Body=f"# Note {n}\n\nKelp.".encode()
            )
        version = [0]

        def change(count: int) -> None:
            version[0] += 1
            for n in range(count):
                body = f"# Note {n}\n\nEdited {version[0]}.".encode()
                admin.put_object(Bucket="bench", Key=f"n{n:05}.md", Body=body)

        def download_all() -> None:
            pages = admin.get_paginator("list_objects_v2").paginate(Bucket="bench")
            for page in pages:
                for found in page.get("Contents", []):
                    admin.get_object(Bucket="bench", Key=found["Key"])["Body"].read()

        _, baseline = timed(download_all)
        print(f"s3, {items} objects; baseline: {baseline:.2f} s for list + GetObject of each")
        downloads: list[str] = []

        def make() -> Source:
            made = client()
            made.meta.events.register("before-send.s3.GetObject", lambda **_: downloads.append(""))
            return S3Source("bench", client=made)

        with Index(root / "s3", embedder=embedder) as kb:
            for label, seconds, summary in syncs(
                kb, "bucket", make, change, items,
                lambda since: f"GetObject calls: {len(downloads) - since}", lambda: len(downloads),
            ):  # fmt: skip
                row(label, seconds, items, baseline, summary)
        admin.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--skip-website", action="store_true")
    parser.add_argument("--skip-s3", action="store_true")
    args = parser.parse_args()
    embedder = create_embedder(args.embedder)
    with tempfile.TemporaryDirectory(prefix="rw-sync-bench") as folder:
        root = Path(folder)
        if not args.skip_website:
            website(root, embedder, args.items)
        if not args.skip_s3:
            s3(root, embedder, args.items)


if __name__ == "__main__":
    main()
