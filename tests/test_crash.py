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


#: Names for the graph's extractor to find, a different pair in each file.
PEOPLE = ["Ada Lovelace", "Charles Babbage", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]


def assert_graph_consistent(database: Path) -> None:
    """No fact without its chunk, and every aggregate equal to its evidence recounted."""
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        for table in ("graph_mentions", "graph_relations", "graph_extractions"):
            orphans = db.execute(
                f"SELECT count(*) FROM {table} WHERE chunk_rowid NOT IN (SELECT rowid FROM chunks)"
            ).fetchone()[0]
            assert orphans == 0, table
        recounted = db.execute("SELECT key, count(*) FROM graph_mentions GROUP BY key").fetchall()
        assert sorted(recounted) == sorted(
            db.execute("SELECT key, mentions FROM graph_entities").fetchall()
        )
        edges = db.execute(
            "SELECT source, target, count(*), sum(weight) FROM graph_relations "
            "GROUP BY source, target"
        ).fetchall()
        assert sorted(edges) == sorted(db.execute("SELECT * FROM graph_edges").fetchall())


@pytest.mark.slow
@pytest.mark.parametrize("graph", [False, True], ids=["plain", "graph"])
def test_sigkill_during_ingest_leaves_a_consistent_index(tmp_path: Path, graph: bool) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(FILES):
        names = f"{PEOPLE[i % 5]} wrote to {PEOPLE[(i + 1) % 5]}. "
        paragraphs = [f"File {i} paragraph {p}: " + names + "lorem ipsum " * 40 for p in range(6)]
        (corpus / f"doc{i:04}.md").write_text("# Title\n\n" + "\n\n".join(paragraphs), "utf-8")
    index = tmp_path / "index"
    command = [sys.executable, "-m", "ragwright", "ingest", str(corpus), "--index", str(index)]
    command += ["--embedder", "hashing", "--chunk-size", "300", "--json"]
    command += ["--graph", "--extractor", "capitalized"] if graph else []
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
    assert_graph_consistent(index / DATABASE_NAME)
    with Index(index) as kb:
        for info in kb.documents.list():  # every committed document is whole
            document = kb.documents.get(info.id)
            assert document is not None
            chunks = kb.documents.chunks_of(info.id)
            assert [c.index for c in chunks] == list(range(len(chunks))) and len(chunks) >= 6
            assert chunks[-1].char_end == len(document.content.rstrip())
            assert kb.search(chunks[-1].text[:60], mode="bm25", top_k=50)

        extractor = "capitalized" if graph else None
        first = kb.ingest([corpus], extractor=extractor)
        assert len(first.unchanged) == survivors and len(first.added) == FILES - survivors
        again = kb.ingest([corpus], extractor=extractor)
        assert len(again.unchanged) == FILES and again.chunks_written == 0
        ids = [c.id for d in kb.documents.list() for c in kb.documents.chunks_of(d.id)]
        assert len(ids) == len(set(ids))
        assert len(kb.documents.list()) == FILES
        if graph:  # the re-run completed the graph: every chunk extracted, once
            stats = kb.graph.stats()
            assert stats.extracted == {"capitalized:1": len(ids)}
            assert all(kb.graph.entity(person) is not None for person in PEOPLE)
            assert kb.graph.build("capitalized").chunks_extracted == 0
    assert_graph_consistent(index / DATABASE_NAME)
