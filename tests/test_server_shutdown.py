"""Stopping `ragwright serve` while an upload is being ingested: the document is then in the
index whole (graceful stop: the request finishes) or not at all (killed: rolled back)."""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from ragwright import Index
from ragwright.stores.sqlite import DATABASE_NAME
from ragwright.testing import HashingEmbedder
from server_helpers import free_port, wait_for

pytestmark = pytest.mark.slow


def big_markdown() -> bytes:
    sections = [
        f"## Part {n}\n\n" + " ".join(f"word{n}x{i} sentence text." for i in range(80))
        for n in range(1500)
    ]
    return ("# Big\n\n" + "\n\n".join(sections) + "\n").encode()


def reference(tmp_path: Path, data: bytes) -> tuple[str, list[tuple[int, int, str]]]:
    """What ingesting the same file as uploads/big.md gives: content and chunk spans."""
    staging = tmp_path / "reference"
    (staging / "uploads").mkdir(parents=True)
    (staging / "uploads" / "big.md").write_bytes(data)
    with Index(tmp_path / "reference-index", embedder=HashingEmbedder()) as index:
        index.ingest([staging / "uploads" / "big.md"], base=staging)
        document = index.documents.get("uploads/big.md")
        assert document is not None
        chunks = index.documents.chunks_of(document.id)
        return document.content, [(c.char_start, c.char_end, c.text) for c in chunks]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_stop_during_upload_leaves_the_whole_document_or_none(
    tmp_path: Path, stop: signal.Signals
) -> None:
    directory = tmp_path / "index"
    with Index(directory, embedder=HashingEmbedder()) as index:
        seed = tmp_path / "seed.md"
        seed.write_text("# Seed\n\nA first document.\n")
        index.ingest([seed])
    data = big_markdown()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAGWRIGHT_CONFIG"}
    server = subprocess.Popen(
        [sys.executable, "-m", "ragwright", "serve", "--index", str(directory),
         "--port", str(port)],
        stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert server.returncode is None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in server.stderr], daemon=True).start()  # type: ignore[union-attr]
        wait_for(lines, "Application startup complete")
        outcome: dict[str, object] = {}

        def send() -> None:
            try:
                files = [("files", ("big.md", data, "text/markdown"))]
                response = httpx.post(
                    f"http://127.0.0.1:{port}/v1/documents", files=files, timeout=120
                )
                outcome["status"] = response.status_code
            except httpx.HTTPError as error:
                outcome["error"] = error

        client = threading.Thread(target=send)
        client.start()
        wait_for(lines, '"event": "ingest.start"')
        server.send_signal(stop)
        server.wait(timeout=120)
        client.join(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()

    content, spans = reference(tmp_path, data)
    with sqlite3.connect(directory / DATABASE_NAME) as db:  # opening rolls back what was left
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with Index(directory) as index:
        assert index.documents.get("seed.md") is not None
        document = index.documents.get("uploads/big.md")
        if stop == signal.SIGTERM:  # graceful: the in-flight upload finished first
            # uvicorn re-raises the signal once it has shut down cleanly
            assert outcome.get("status") == 200 and server.returncode in (0, -signal.SIGTERM)
            assert document is not None
        if document is None:
            assert "status" not in outcome
            assert index.documents.stats().chunks == len(index.documents.chunks_of(seed_id(index)))
            assert [d.source for d in index.documents.list()] == ["seed.md"]
        else:
            chunks = index.documents.chunks_of(document.id)
            assert document.content == content
            assert [(c.char_start, c.char_end, c.text) for c in chunks] == spans


def seed_id(index: Index) -> str:
    seed = index.documents.get("seed.md")
    assert seed is not None
    return seed.id
