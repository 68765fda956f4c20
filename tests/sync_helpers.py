"""Helpers of the sync-source tests: the `ragwright sync` command run as a real process, an
index's documents as a comparable state; the loopback website is `ragwright.testing.site_server`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ragwright import Index
from ragwright.testing import HashingEmbedder
from ragwright.testing.site_server import Site, serve_site

__all__ = [
    "Site", "documents", "run_sync", "serve_site", "sync_command", "sync_environment", "wait_for",
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
