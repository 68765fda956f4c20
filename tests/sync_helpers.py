"""Helpers of the sync-source tests: the `ragwright sync` command run as a real process, an
index's documents as a comparable state; the loopback website is `ragwright.testing.site_server`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ragwright import Index
from ragwright.errors import SourceError
from ragwright.ports import Checkpoint, ListingOutcome, SourceItem
from ragwright.testing import HashingEmbedder
from ragwright.testing.site_server import Site, serve_site

__all__ = [
    "Scripted", "Site", "documents", "run_sync", "serve_site", "sync_command", "sync_environment",
    "wait_for",
]  # fmt: skip


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
        for info in kb.documents.list():
            document = kb.documents.get(info.source)
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


class Scripted:
    """A source whose listing is a script: items, whether complete, what failed."""

    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self.complete = True
        self.broken_after: int | None = None
        self.fetched: list[str] = []
        self.during: object = None

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        outcome.complete = self.complete
        for number, (key, text) in enumerate(sorted(self.items.items())):
            if self.broken_after is not None and number >= self.broken_after:
                raise SourceError("the server went away")
            if callable(self.during):
                self.during()
            yield SourceItem(key, text, f"mem:{key}", f"{key}.txt")
        outcome.cursor = "end"

    def fetch(self, item: SourceItem) -> bytes:
        self.fetched.append(item.key)
        return item.version.encode()

    def close(self) -> None:
        pass
