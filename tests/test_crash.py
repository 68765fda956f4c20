"""A process killed with SIGKILL mid-ingest leaves a consistent index, and a re-run converges."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.stores.sqlite import DATABASE_NAME

FILES = 400


def committed_documents(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(database, timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM documents").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkill_during_ingest_leaves_a_consistent_index(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(FILES):
        paragraphs = [f"File {i} paragraph {p}: " + "lorem ipsum " * 40 for p in range(6)]
        (corpus / f"doc{i:04}.md").write_text("# Title\n\n" + "\n\n".join(paragraphs), "utf-8")
    index = tmp_path / "index"
    command = [sys.executable, "-m", "ragwright", "ingest", str(corpus), "--index", str(index)]
    command += ["--embedder", "hashing", "--chunk-size", "300", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while committed_documents(index / DATABASE_NAME) < 20:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    survivors = committed_documents(index / DATABASE_NAME)
    assert 20 <= survivors < FILES, "the kill should land mid-ingest"

    db = sqlite3.connect(index / DATABASE_NAME)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    db.close()
    with Index(index) as kb:
        for info in kb.documents():  # every committed document is whole
            document = kb.document(info.id)
            assert document is not None
            chunks = kb.chunks_of(info.id)
            assert [c.index for c in chunks] == list(range(len(chunks))) and len(chunks) >= 6
            assert chunks[-1].char_end == len(document.content.rstrip())
            assert kb.search(chunks[-1].text[:60], mode="bm25", top_k=50)

        first = kb.ingest([corpus])
        assert len(first.unchanged) == survivors and len(first.added) == FILES - survivors
        again = kb.ingest([corpus])
        assert len(again.unchanged) == FILES and again.chunks_written == 0
        ids = [c.id for d in kb.documents() for c in kb.chunks_of(d.id)]
        assert len(ids) == len(set(ids))
        assert len(kb.documents()) == FILES
