"""`ragwright watch` killed (SIGKILL) at random points while files change, and restarted,
converges to a fresh ingest of the folder: nothing lost, nothing duplicated."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragwright import Index
from watch_helpers import fresh_state, index_state, wait_for

WORDS = "north south amber coral delta fjord glacier island jungle kelp lagoon".split()


def start_watch(folder: Path, log: Path) -> subprocess.Popen[bytes]:
    environment = {k: v for k, v in os.environ.items() if k != "RAGWRIGHT_CONFIG"}
    command = [sys.executable, "-m", "ragwright", "watch", "docs", "--index", "kb"]
    command += ["--embedder", "hashing", "--debounce", "50", "--reconcile-every", "0"]
    with log.open("ab") as output:
        return subprocess.Popen(
            command, cwd=folder, env=environment, stdout=output, stderr=subprocess.STDOUT
        )


@pytest.mark.slow
def test_killed_watch_restarts_and_converges(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for folder in ("a", "b"):
        (docs / folder).mkdir(parents=True)
    rng = random.Random(1414)
    counter = iter(range(10_000))
    log = tmp_path / "watch.log"

    def write(path: Path) -> None:
        words = " ".join(rng.choices(WORDS, k=rng.randint(3, 10)))
        path.write_text(f"entry {next(counter)} {words}\n", "utf-8")

    def operate() -> None:
        present = sorted(p for p in docs.rglob("*") if p.is_file())
        kind = rng.choice(["create", "create", "modify", "touch", "rename", "delete"])
        if kind == "create" or not present:
            write(docs / rng.choice("ab") / f"n{rng.randint(0, 30)}.md")
            return
        target = rng.choice(present)
        if kind == "modify":
            write(target)
        elif kind == "touch":
            os.utime(target)
        elif kind == "rename":
            os.replace(target, docs / rng.choice("ab") / f"n{rng.randint(0, 30)}.md")
        else:
            target.unlink()

    process = start_watch(tmp_path, log)
    kills, kill_at = 0, time.monotonic() + rng.uniform(1.5, 3.5)
    try:
        for _ in range(150):
            operate()
            time.sleep(rng.uniform(0, 0.05))
            if kills < 3 and time.monotonic() >= kill_at:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
                kills += 1
                process = start_watch(tmp_path, log)
                kill_at = time.monotonic() + rng.uniform(1.5, 3.5)
        while kills < 3:  # the operations ran out first: kill while it catches up
            time.sleep(rng.uniform(0.3, 1.5))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            kills += 1
            process = start_watch(tmp_path, log)
        expected = fresh_state(docs, tmp_path / "fresh")
        assert wait_for(lambda: (tmp_path / "kb").exists(), timeout=30)
        with Index(tmp_path / "kb") as kb:
            assert wait_for(lambda: index_state(kb) == expected, timeout=60), log.read_text()
            stats = kb.documents.stats()
            assert stats.documents == len(expected)
            assert stats.chunks == sum(len(chunks) for *_, chunks in expected.values())
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert kills == 3
