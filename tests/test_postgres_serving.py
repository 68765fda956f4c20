"""`ragwright serve --index postgresql://…` as real processes: two servers answer readers while
a third process ingests into the same database, with no error anywhere, and both servers see
the new documents as soon as each is committed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from ragwright import Index
from ragwright.testing import HashingEmbedder
from server_helpers import serve_process

pytestmark = pytest.mark.slow

FILES = 40


def test_two_servers_serve_readers_while_a_third_process_ingests(
    pg_url: str, tmp_path: Path
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "guide.md").write_text("# Guide\n\nRun pip install ragwright on Linux.", "utf-8")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest([seed]).ok
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for n in range(FILES):
        text = f"# Note {n}\n\nThe zebra number {n} grazes near the river.\n\n" * 20
        (incoming / f"note{n:02}.md").write_text(text, "utf-8")

    failures: list[str] = []
    answered = [0]
    stop = threading.Event()

    def read(base: str) -> None:
        with httpx.Client(base_url=base, timeout=30) as client:
            while not stop.is_set():
                for method, path, body in (
                    ("POST", "/v1/search", {"query": "zebra river", "top_k": 5}),
                    ("POST", "/v1/search", {"query": "install", "mode": "bm25"}),
                    ("GET", "/v1/documents", None),
                ):
                    response = client.request(method, path, json=body)
                    if response.status_code != 200:
                        failures.append(f"{base}{path}: {response.status_code} {response.text}")
                    answered[0] += 1

    with ExitStack() as stack:
        bases = [stack.enter_context(serve_process(pg_url, tmp_path)) for _ in range(2)]
        readers = [threading.Thread(target=read, args=(b,)) for b in bases for _ in range(2)]
        for reader in readers:
            reader.start()
        command = [sys.executable, "-m", "ragwright", "ingest", str(incoming), "--index", pg_url]
        ingest = subprocess.run(
            command,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )
        time.sleep(0.5)  # readers keep going after the last commit
        stop.set()
        for reader in readers:
            reader.join(60)
        assert ingest.returncode == 0, ingest.stderr
        assert failures == [] and answered[0] > 0
        for base in bases:
            documents = httpx.get(f"{base}/v1/documents", timeout=30).json()["documents"]
            assert len(documents) == FILES + 1
            found = httpx.post(
                f"{base}/v1/search", json={"query": "zebra number 7", "mode": "bm25"}, timeout=30
            ).json()["hits"]
            assert found and found[0]["source"].startswith("incoming/note")
