"""The PostgreSQL store's ingest lock, across real processes: a second `ragwright ingest` into
the same collection waits for the first and then finds the files unchanged; a killed holder
frees the lock; a server that cannot be reached is a `StoreError`."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ragwright import Index
from ragwright.errors import StoreError
from ragwright.ports import IngestLock
from ragwright.stores.postgres import PostgresBackend
from ragwright.testing import HashingEmbedder

pytestmark = pytest.mark.slow

WAITING = "waiting for another ingest"


def _lines(stream: Any, into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _wait_for(lines: queue.Queue[str], marker: str) -> None:
    while marker not in lines.get(timeout=60):
        pass


def test_a_second_ingest_process_waits_then_finds_the_files_unchanged(
    pg_url: str, tmp_path: Path
) -> None:
    seed, docs = tmp_path / "seed", tmp_path / "docs"
    for folder in (seed, docs):
        folder.mkdir()
    (seed / "guide.md").write_text("# Guide\n\nThe index records its embedder.\n")
    for number in range(12):
        (docs / f"note{number}.md").write_text(f"# Note {number}\n\nHarbour number {number}.\n")
    with Index(pg_url, embedder=HashingEmbedder()) as kb:
        assert kb.ingest(seed).ok  # the CLI runs reopen the recorded (hashing) embedder
    backend = PostgresBackend(pg_url, pool_size=1)
    holder = backend.open()
    assert isinstance(holder, IngestLock)
    command = [sys.executable, "-m", "ragwright", "ingest", str(docs), "--index", pg_url, "--json"]
    runs: list[subprocess.Popen[str]] = []
    try:
        with holder.ingest_lock():  # both runs start while the lock is held
            for _ in range(2):
                run = subprocess.Popen(
                    command, cwd=tmp_path, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
                runs.append(run)
                lines: queue.Queue[str] = queue.Queue()
                threading.Thread(target=_lines, args=(run.stderr, lines), daemon=True).start()
                _wait_for(lines, WAITING)
            assert all(run.poll() is None for run in runs)  # both wait: nothing written yet
            assert [Path(d.source).name for d in holder.list_documents()] == ["guide.md"]
        reports = [json.loads(run.communicate(timeout=300)[0]) for run in runs]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
        holder.close()
        backend.close()
    assert all(run.returncode == 0 for run in runs)
    counts = sorted((len(r["added"]), len(r["unchanged"])) for r in reports)
    assert counts == [(0, 12), (12, 0)]


HOLD = """
import sys
from ragwright.stores.postgres import PostgresBackend
backend = PostgresBackend(sys.argv[1], pool_size=1)
with backend.open().ingest_lock():
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_killed_holder_frees_the_lock_and_a_waiting_run_goes_on(pg_url: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, pg_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    backend = PostgresBackend(pg_url, pool_size=1)
    store = backend.open()
    waited, acquired = threading.Event(), threading.Event()

    def take() -> None:
        with store.ingest_lock(waited.set):
            acquired.set()

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        taker = threading.Thread(target=take)
        taker.start()
        assert waited.wait(30)
        assert not acquired.wait(0.5)  # still held by the other process
        holder.kill()
        holder.wait(30)
        taker.join(60)
        assert acquired.is_set()
    finally:
        if holder.poll() is None:
            holder.kill()
        store.close()
        backend.close()


def test_the_lock_is_per_collection_and_free_again_after_its_run(pg_url: str) -> None:
    backend = PostgresBackend(pg_url, pool_size=2)
    default, other = backend.open(), backend.open("other")
    calls: list[str] = []
    try:
        with (  # another collection's lock is another lock
            default.ingest_lock(lambda: calls.append("default")),
            other.ingest_lock(lambda: calls.append("other")),
        ):
            pass
        with default.ingest_lock(lambda: calls.append("again")):
            pass
        with psycopg.connect(pg_url) as conn:  # no advisory lock is left behind
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            ).fetchone()
            assert row is not None and row[0] == 0
    finally:
        default.close()
        other.close()
        backend.close()
    assert calls == []


def test_a_server_that_cannot_be_reached_is_a_store_error(pg_server: Any, pg_url: str) -> None:
    backend = PostgresBackend(pg_url, pool_size=1, retry_seconds=0.3)
    store = backend.open()
    backend.close()
    name = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    try:
        with pytest.raises(StoreError, match="cannot connect to PostgreSQL"), store.ingest_lock():
            pass
    finally:
        store.close()
