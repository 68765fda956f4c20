"""The file-system source (`FolderSync` with its checkpoint) through `ragwright sync`: add,
run, list and remove; an update, a delete and a move; an unchanged folder costs no read; a run
killed midway converges; and a third-party source plugs in through the entry-point group."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright import Index
from ragwright.cli import app
from ragwright.pipeline.sync.folder_sync import RACY_NS
from ragwright.sources import FolderSource
from ragwright.testing import HashingEmbedder
from sync_helpers import documents, run_sync, sync_command, sync_environment, wait_for


def settle(folder: Path) -> None:
    """Every file's time moved into the past: a size and time are trusted once no write can
    share them (`RACY_NS`)."""
    past = time.time_ns() - 3 * RACY_NS
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(past, past))


def cli(tmp_path: Path, *args: str) -> str:
    config = str(tmp_path / "ragwright.toml")
    result = CliRunner().invoke(app, ["sync", *args, "--config", config])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_add_run_list_remove_with_an_update_a_delete_and_a_move(
    tmp_path: Path, monkeypatch: object
) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nAmber coral.\n")
    (docs / "b.md").write_text("# B\n\nBasalt cliffs.\n")
    (docs / "sub" / "c.txt").write_text("Coral notes.\n")
    settle(docs)
    index = ["--index", str(tmp_path / "kb"), "--embedder", "hashing"]
    assert "added source docs (files)" in cli(tmp_path, "add", "docs", "--type", "files",
                                              "--set", f'paths=["{docs}"]')  # fmt: skip
    assert "docs: 3 added, 0 updated, 0 unchanged, 0 removed, 0 failed" in cli(
        tmp_path, "run", *index
    )
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        again = kb.sync_source("docs", FolderSource((docs,)))
        assert (again.unchanged, again.hashed) == (3, 0)  # sizes and times from the checkpoint

    (docs / "a.md").write_text("# A\n\nAmber coral and kelp.\n")
    (docs / "b.md").unlink()
    os.replace(docs / "sub" / "c.txt", docs / "c.txt")
    output = cli(tmp_path, "run", *index)
    assert "docs: 0 added, 1 updated, 0 unchanged, 1 removed, 1 moved, 0 failed" in output
    assert "docs  " in cli(tmp_path, "list", "--index", str(tmp_path / "kb"))
    state = documents(tmp_path / "kb")
    assert {Path(s).name for s in state} == {"a.md", "c.txt"}

    output = cli(tmp_path, "remove", "docs", "--index", str(tmp_path / "kb"), "--purge")
    assert "removed source docs and its 2 documents" in output
    assert documents(tmp_path / "kb") == {}
    assert "[sources.docs]" not in (tmp_path / "ragwright.toml").read_text()


@pytest.mark.slow
def test_a_killed_sync_run_converges(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    total = 1200
    for number in range(total):
        (docs / f"n{number:04}.md").write_text(f"# Note {number}\n\nHarbour {number}.\n")
    (tmp_path / "ragwright.toml").write_text('[sources.docs]\ntype = "files"\npaths = ["docs"]\n')
    command = sync_command("run", "--index", "kb", "--embedder", "hashing")
    process = subprocess.Popen(
        command, cwd=tmp_path, env=sync_environment(), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip

    def stored() -> int:
        try:
            path = tmp_path / "kb" / "index.sqlite3"
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
                return int(db.execute("SELECT count(*) FROM documents").fetchone()[0])
        except sqlite3.Error:
            return 0

    try:
        assert wait_for(lambda: stored() > 0, timeout=90)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    killed_at = stored()
    assert 0 < killed_at < total
    rerun = run_sync(tmp_path, "run", "--index", "kb", "--embedder", "hashing")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    state = documents(tmp_path / "kb")
    assert sorted(state) == [f"docs/n{n:04}.md" for n in range(total)]


PLUGIN = '''
from ragwright.ports import SourceItem


class NotesSource:
    """A third-party source: notes in a JSON file, versions by their text."""

    def __init__(self, path):
        self.path = path

    def list_items(self, checkpoint, outcome):
        import json
        for key, text in sorted(json.loads(open(self.path).read()).items()):
            yield SourceItem(key, text, f"notes:{key}", f"{key}.txt", principals=("all",))

    def fetch(self, item):
        return item.version.encode()

    def close(self):
        pass


def open_notes(settings):
    return NotesSource(settings.path(settings.required("file")))
'''


@pytest.mark.slow
def test_a_third_party_source_plugs_in_through_the_entry_point_group(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    info = plugin / "notes_source-0.1.dist-info"
    info.mkdir(parents=True)
    (plugin / "notes_source.py").write_text(textwrap.dedent(PLUGIN))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: notes-source\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ragwright.sources]\nnotes = notes_source:open_notes\n")
    (tmp_path / "notes.json").write_text('{"one": "First note.", "two": "Second note."}')
    (tmp_path / "ragwright.toml").write_text(
        '[sources.mine]\ntype = "notes"\nfile = "notes.json"\n'
    )
    environment = sync_environment(PYTHONPATH=str(plugin))
    args = ["run", "--index", "kb", "--embedder", "hashing"]
    result = subprocess.run(
        sync_command(*args), cwd=tmp_path, env=environment, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mine: 2 added" in result.stdout
    (tmp_path / "notes.json").write_text('{"one": "First note, edited."}')
    result = subprocess.run(
        sync_command(*args), cwd=tmp_path, env=environment, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert "mine: 0 added, 1 updated, 0 unchanged, 1 removed" in result.stdout
    assert documents(tmp_path / "kb") == {"notes:one": "First note, edited."}
