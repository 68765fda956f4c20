"""Where each sync source stands: the checkpoint's items, cursor and last run, the cursor's age,
and what the last run could not do (failed items, pending until a run syncs them), on
`Index.source_states`, ``ragwright sync list`` and ``GET /v1/sync``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app as cli
from ragwright.config import Config
from ragwright.errors import SourceError
from ragwright.ports import SourceItem
from ragwright.testing import HashingEmbedder
from server_helpers import serve
from sync_helpers import Scripted

CONFIG = Config({"sources": {"notes": {"type": "files", "root": "."}}})


class Flaky(Scripted):
    """Fails to fetch the item ``bad`` while ``broken``."""

    broken = True

    def fetch(self, item: SourceItem) -> bytes:
        if item.key == "bad" and self.broken:
            raise SourceError("the server answered 503 for bad")
        return super().fetch(item)


def synced(tmp_path: Path) -> tuple[Path, Flaky]:
    source = Flaky()
    source.items = {"good": "Good notes.", "bad": "Bad notes."}
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=CONFIG) as kb:
        report = kb.sync_source("notes", source)
        assert [f.source for f in report.failed] == ["mem:bad"]
    return tmp_path / "kb", source


def test_a_sources_state_names_its_failed_items_until_a_run_syncs_them(tmp_path: Path) -> None:
    location, source = synced(tmp_path)
    with Index(location, config=CONFIG) as kb:
        (state,) = kb.sources.states()
        assert (state.name, state.type, state.items, state.failed) == ("notes", "files", 1, 1)
        assert state.complete is True and state.cursor is None  # a failure holds the cursor
        assert state.last_run is not None and state.cursor_age is None  # never advanced
        assert [(f.source, f.reason) for f in state.failures] == [
            ("mem:bad", "the server answered 503 for bad")
        ]
        source.broken = False
        kb.sync_source("notes", source)
        (state,) = kb.sources.states()
        assert (state.items, state.failed, state.failures, state.cursor) == (2, 0, (), "end")
        assert state.cursor_age is not None and state.cursor_age >= 0
        kb.sources.forget("notes")
        (state,) = kb.sources.states()
        assert (state.items, state.last_run, state.complete) == (0, None, None)


def test_sync_list_and_get_v1_sync_show_each_source(tmp_path: Path) -> None:
    location, _ = synced(tmp_path)
    config = tmp_path / "ragwright.toml"
    config.write_text('[sources.notes]\ntype = "files"\nroot = "."\n', "utf-8")
    listed = runner.invoke(
        cli, ["sync", "list", "--index", str(location), "--config", str(config), "--json"]
    )
    assert listed.exit_code == 0, listed.output
    (shown,) = json.loads(listed.output)["sources"]
    assert (shown["name"], shown["items"], shown["failed"]) == ("notes", 1, 1)
    assert shown["failures"][0]["source"] == "mem:bad" and shown["last_run"] is not None
    text = runner.invoke(cli, ["sync", "list", "--index", str(location), "--config", str(config)])
    assert "1 failed (pending)" in text.output and "mem:bad" in text.output
    with Index(location, config=CONFIG) as kb, serve(kb) as url:
        status = httpx.get(f"{url}/v1/sync").json()
    assert [(s["name"], s["failed"]) for s in status["sources"]] == [("notes", 1)]
    assert status["watching"] == []
