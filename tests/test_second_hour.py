"""The papercuts a new user hit in the second first hour (issue 35): each test names its item."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ragwright
from cli_helpers import ingest_sample_docs, runner
from pdf_files import build_text_pdf
from ragwright.cli import app


def test_counts_read_in_the_right_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    assert "1 collection\n" in runner.invoke(app, ["collections", "list"]).output
    assert "2 documents" in runner.invoke(app, ["docs", "list"]).output
    config = tmp_path / "ragwright.toml"
    runner.invoke(app, ["keys", "add", "bot", "--config", str(config)])
    listed = runner.invoke(app, ["keys", "list", "--config", str(config)])
    assert listed.exit_code == 0 and "1 key\n" in listed.output


def test_keys_add_and_remove_say_the_server_must_restart(tmp_path: Path) -> None:
    config = ["--config", str(tmp_path / "ragwright.toml")]
    added = runner.invoke(app, ["keys", "add", "bot", *config])
    assert added.exit_code == 0, added.output
    assert "restart `ragwright serve`" in added.stderr
    assert added.stdout.strip().startswith("rw_")  # the key alone on stdout, for scripts
    removed = runner.invoke(app, ["keys", "remove", "bot", *config])
    assert "restart `ragwright serve`" in removed.stderr


def test_graph_entity_not_found_says_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Alice met Bob in Paris.", "utf-8")
    graph = ["--graph", "--extractor", "capitalized", "--embedder", "hashing"]
    assert runner.invoke(app, ["ingest", "docs", *graph]).exit_code == 0
    missing = runner.invoke(app, ["graph", "entity", "Zork"])
    assert missing.exit_code == 1
    assert missing.stderr.startswith("error: no entity 'Zork' in the graph")


def test_a_typo_d_path_creates_no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["ingest", "../nope", "--index", "kb"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no such file or folder: ../nope; nothing was ingested")
    assert not (tmp_path / "kb").exists()


def test_ctrl_c_during_ingest_says_what_was_kept(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    # Long enough to be interrupted midway even when this process is slow to see the index
    # appear (2,000 files were all ingested first once on a loaded machine: the signal then
    # came at interpreter exit).
    for number in range(8000):
        (docs / f"f{number}.txt").write_text(f"Document {number} on topic {number % 37}.")
    env = {**os.environ, "PYTHONPATH": str(Path(ragwright.__file__).parents[1])}
    command = [sys.executable, "-m", "ragwright", "ingest", "docs", "--embedder", "hashing"]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    database = tmp_path / ".ragwright" / "index.sqlite3"
    while not database.exists() and process.poll() is None:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-3000:]
    assert "interrupted: the documents written so far are kept" in stderr
    assert "Traceback" not in stderr


def test_ctrl_c_inside_generated_code_still_exits_130(tmp_path: Path) -> None:
    """The flaky form of the test above, made certain: a Ctrl-C that lands while generated code
    runs (a dataclass's methods are built by ``exec`` of a string when its module is imported)
    is caught and reported like any other, and ``python -m ragwright`` exits 130, not killed."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Alpha.", "utf-8")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import ragwright.cli.ingest as ingest\n"
        "def interrupted(*args, **kwargs):\n"
        "    exec('raise KeyboardInterrupt')\n"
        "ingest.open_index = interrupted\n",
        "utf-8",
    )
    source = str(Path(ragwright.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), source])}
    command = [sys.executable, "-m", "ragwright", "ingest", "docs", "--embedder", "hashing"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 130, done.stderr[-3000:]
    assert "interrupted: the documents written so far are kept" in done.stderr


def test_json_on_keys_list_docs_delete_and_collections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    config = ["--config", str(tmp_path / "ragwright.toml")]
    runner.invoke(app, ["keys", "add", "bot", "--principal", "group:hr", *config])
    keys = runner.invoke(app, ["keys", "list", "--json", *config])
    assert json.loads(keys.stdout) == {
        "keys": [{"name": "bot", "scope": "read", "principals": ["group:hr"]}]
    }
    deleted = runner.invoke(app, ["docs", "delete", "docs/pets.txt", "--json"])
    assert json.loads(deleted.stdout) == {"deleted": "docs/pets.txt"}
    created = runner.invoke(app, ["collections", "create", "notes", "--json"])
    assert json.loads(created.stdout) == {"created": "notes"}
    dropped = runner.invoke(app, ["collections", "drop", "notes", "--yes", "--json"])
    assert json.loads(dropped.stdout) == {"dropped": "notes"}


def test_watch_json_prints_one_object_per_pass(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha.", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(ragwright.__file__).parents[1])}
    command = [
        sys.executable,
        "-m",
        "ragwright",
        "watch",
        "docs",
        "--json",
        "--embedder",
        "hashing",
    ]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())  # the walk at the start
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert first["kind"] == "reconcile" and first["added"] == ["docs/a.txt"]
    assert first["pending"] == 0 and first["failures"] == [] and first["complete"] is True


def test_a_page_break_shows_as_a_rule_not_a_replacement_character(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    build_text_pdf(tmp_path / "docs" / "two.pdf", 2, outline=False)
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"]).exit_code == 0
    shown = runner.invoke(app, ["docs", "show", "docs/two.pdf"])
    assert shown.exit_code == 0, shown.output
    assert "\ufffd" not in shown.stdout and "\n────────\n" in shown.stdout
