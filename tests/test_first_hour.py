"""What a new user trips over in the first hour (issue 18): each test names its item."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.testing import HashingEmbedder


def _checkout(tmp_path: Path) -> Path:
    checkout = tmp_path / "newcomer"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "docs" / "quickstart.md").write_text("# Quick start\n\nInstall it with pip.\n")
    return checkout


def test_1_sources_are_named_from_where_ingest_runs_whichever_index_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(checkout)
    index = ["--index", str(tmp_path / "kb")]
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing", *index]).exit_code == 0
    search = ["search", "install", "--mode", "bm25", "--json", *index]
    result = runner.invoke(app, [*search, "--filter", 'source = "docs/quickstart.md"'])
    assert [hit["source"] for hit in json.loads(result.output)["hits"]] == ["docs/quickstart.md"]
    assert runner.invoke(app, ["docs", "show", "docs/quickstart.md", *index]).exit_code == 0
    # A later run from elsewhere finds the same documents instead of adding copies.
    monkeypatch.chdir(tmp_path)
    again = runner.invoke(app, ["ingest", "newcomer/docs", "--json", *index])
    assert json.loads(again.output)["unchanged"] == ["docs/quickstart.md"]


def test_1_root_names_sources_and_an_old_index_keeps_its_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(tmp_path)
    index = ["--index", str(tmp_path / "kb")]
    flags = ["--embedder", "hashing", "--json", *index]
    rooted = runner.invoke(app, ["ingest", "newcomer/docs", "--root", str(checkout), *flags])
    assert json.loads(rooted.output)["added"] == ["docs/quickstart.md"]
    # An index filled before the source folder was recorded (here by the Python API, which
    # names relative to the folder holding the index) keeps naming sources that way.
    with Index(checkout / "old-kb", embedder=HashingEmbedder()) as kb:
        kb.ingest(checkout / "docs")
    monkeypatch.chdir(checkout / "docs")
    old = runner.invoke(app, ["ingest", ".", "--json", "--index", str(checkout / "old-kb")])
    assert json.loads(old.output)["unchanged"] == ["docs/quickstart.md"]


def test_11_ingest_accepts_one_path_as_a_string(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    with Index(checkout / ".ragwright", embedder=HashingEmbedder()) as kb:
        report = kb.ingest(str(checkout / "docs"))
    assert report.added == ["docs/quickstart.md"] and not report.failed


def test_3_scores_are_shown_with_their_scale_and_hits_know_their_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(checkout)
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"]).exit_code == 0
    result = runner.invoke(app, ["search", "install it"])
    assert re.search(r"^1\. docs/quickstart\.md .* score \d\.\d{3} \(fused\)", result.output, re.M)
    hits = json.loads(runner.invoke(app, ["search", "install it", "--json"]).output)["hits"]
    assert hits[0]["rank"] == 1 and hits[0]["scale"] == "fused"
    with Index(".ragwright") as kb:
        found = kb.search("install it", top_k=3)
    assert [hit.rank for hit in found] == list(range(1, len(found) + 1))
    assert found[0].text == found[0].chunk.text and "pip" in found[0].text


def test_4_version_completion_init_and_the_mcp_servers_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio
    from mcp import Client

    from ragwright import __version__
    from ragwright.config import load_config
    from ragwright.llms.settings import LLMSettings
    from ragwright.mcp_server import build_server
    from ragwright.server.settings import ServerSettings

    assert runner.invoke(app, ["--version"]).output.strip() == f"ragwright {__version__}"
    assert "--install-completion" in runner.invoke(app, ["--help"]).output
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init"]).exit_code == 0
    written = Path("ragwright.toml").read_text()
    assert "[llm]" in written and "# engine = " in written
    again = runner.invoke(app, ["init"])
    assert again.exit_code == 2 and "--force" in again.output
    # Every commented-out setting is valid as written.
    Path("all.toml").write_text(re.sub(r"^# (\[|\w+ = )", r"\1", written, flags=re.M))
    every = load_config("all.toml")
    assert LLMSettings.from_config(every).request_budget.max_calls == 20
    assert ServerSettings.from_config(every).max_files == 100
    assert LLMSettings.from_config(load_config("ragwright.toml")) == LLMSettings()

    async def server_version() -> str | None:
        with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
            async with Client(build_server(kb)) as client:
                info = client.server_info
                return None if info is None else info.version

    assert anyio.run(server_version) == __version__


def test_5_keys_explain_that_they_live_in_the_config_file_not_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["keys", "add", "bot", "--index", "kb"])
    assert result.exit_code == 2 and "configuration file" in result.output
    assert not Path("ragwright.toml").exists()
    for command in (["list"], ["remove", "bot"]):
        refused = runner.invoke(app, ["keys", *command, "--index", "kb"])
        assert refused.exit_code == 2 and "--config" in refused.output


@pytest.mark.parametrize("command", ["search", "ask"])
def test_6_the_cli_refuses_what_http_and_mcp_refuse(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragwright.surface_limits import MAX_ASK_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K

    monkeypatch.chdir(tmp_path)
    top_k = MAX_TOP_K if command == "search" else MAX_ASK_TOP_K
    empty = runner.invoke(app, [command, "  "])
    assert empty.exit_code == 2 and "empty" in empty.output
    long = runner.invoke(app, [command, "x" * (MAX_QUERY_CHARS + 1)])
    assert long.exit_code == 2 and f"{MAX_QUERY_CHARS:,}" in long.output
    too_many = runner.invoke(app, [command, "cats", "--top-k", str(top_k + 1)])
    assert too_many.exit_code == 2 and f"less than or equal to {top_k}" in too_many.output
    assert f"1<=x<={top_k}" in runner.invoke(app, [command, "--help"]).output
    long_filter = runner.invoke(app, [command, "cats", "--filter", "a" * (MAX_QUERY_CHARS + 1)])
    assert long_filter.exit_code == 2 and "filter expression" in long_filter.output


def test_7_a_filter_on_a_field_no_chunk_has_says_so_and_strings_must_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = _checkout(tmp_path)
    monkeypatch.chdir(checkout)
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"]).exit_code == 0
    typo = ["--filter", 'sorce = "docs/quickstart.md"']
    for command in (["search", "install"], ["ask", "How do I install it?"], ["docs", "list"]):
        result = runner.invoke(app, [*command, *typo])
        assert result.exit_code == 0, result.output
        assert "no chunk in the index has the field 'sorce' (did you mean 'source'?)" in (
            " ".join(result.output.split())
        )
    # A field that exists gives no warning, even when nothing matches.
    quiet = runner.invoke(app, ["search", "install", "--filter", 'filename = "none.md"'])
    assert "warning" not in quiet.output and "No results." in quiet.output
    unterminated = runner.invoke(app, ["search", "install", "--filter", 'source = "docs/q'])
    assert unterminated.exit_code == 2
    assert 'unterminated string: no closing " for the " opened at position 9' in (
        unterminated.output
    )


def test_8_unsupported_files_are_reported_and_an_unreadable_folder_is_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "photos").mkdir()
    for name in ("a.png", "b.png", "c.png", "d.png", "notes"):
        (tmp_path / "photos" / name).write_bytes(b"\x89PNG")
    flags = ["--embedder", "hashing"]
    out = json.loads(runner.invoke(app, ["ingest", "photos", *flags, "--json"]).output)
    assert {item["source"]: item["reason"] for item in out["skipped"]} == {
        "photos/a.png": "unsupported file type: no parser reads .png files",
        "photos/b.png": "unsupported file type: no parser reads .png files",
        "photos/c.png": "unsupported file type: no parser reads .png files",
        "photos/d.png": "unsupported file type: no parser reads .png files",
        "photos/notes": "unsupported file type: no parser reads files without an extension",
    }
    [warning] = out["warnings"]
    assert warning["source"] == "photos" and ".md" in warning["message"]
    text = runner.invoke(app, ["ingest", "photos", *flags])
    assert text.exit_code == 0
    assert "skipped photos/a.png, photos/b.png, photos/c.png and 1 more: unsupported" in (
        text.output
    )
    assert "warning photos: no file here can be read; ragwright reads" in text.output
    # Next to a readable file, unsupported ones are still listed, and there is no warning.
    (tmp_path / "photos" / "caption.md").write_text("# Caption\n\nA harbour at dawn.\n")
    mixed = json.loads(runner.invoke(app, ["ingest", "photos", *flags, "--json"]).output)
    assert mixed["added"] == ["photos/caption.md"] and len(mixed["skipped"]) == 5
    assert mixed["warnings"] == []


def test_9_a_second_ingest_at_the_same_time_waits_and_finds_the_files_unchanged(
    tmp_path: Path,
) -> None:
    import threading

    from ragwright.stores.ingest_lock import ingest_lock

    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(12):
        (docs / f"note{number}.md").write_text(f"# Note {number}\n\nHarbour number {number}.\n")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()):
        pass  # the index directory exists
    waiting = [threading.Event(), threading.Event()]
    reports = []

    def run(number: int) -> None:
        with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
            reports.append(kb.ingest(docs, waiting=waiting[number].set))

    runs = [threading.Thread(target=run, args=(number,)) for number in (0, 1)]
    with ingest_lock(tmp_path / "kb"):  # both runs start while the lock is taken
        for thread in runs:
            thread.start()
        assert all(event.wait(30) for event in waiting)
    for thread in runs:
        thread.join(60)
    assert sorted((len(r.added), len(r.unchanged)) for r in reports) == [(0, 12), (12, 0)]


def test_12_serve_logs_text_on_a_terminal_and_json_elsewhere() -> None:
    import logging

    from ragwright.cli.serve import LogFormat
    from ragwright.server.access_log import FORMATTERS, logging_config

    assert LogFormat.AUTO.resolved(interactive=True) == "text"
    assert LogFormat.AUTO.resolved(interactive=False) == "json"
    assert LogFormat.JSON.resolved(interactive=True) == "json"
    config = logging_config("info", "text")
    assert config["formatters"]["main"]["()"] is FORMATTERS["text"]
    request = {"event": "request", "duration_ms": 12.5, "key": "bot", "status": 200}
    record = logging.LogRecord(
        "ragwright.server", logging.INFO, "", 0, "GET /v1/search 200", (), None
    )
    record.fields = request
    line = FORMATTERS["text"]().format(record)
    assert re.fullmatch(r"\d\d:\d\d:\d\d GET /v1/search 200 12\.5 ms key=bot", line)
    assert json.loads(FORMATTERS["json"]().format(record))["duration_ms"] == 12.5
    assert "--log-format" in runner.invoke(app, ["serve", "--help"]).output


def test_12_the_ingest_rate_is_files_over_the_time_since_the_start() -> None:
    """18 files that finish in a burst at the end of 27 s are 0.7 files/s, not 28."""
    from rich.progress import Progress

    from ragwright.cli.ingest import _RateColumn

    now = [0.0]
    column = _RateColumn()
    with Progress(column, get_time=lambda: now[0], disable=True) as bar:
        task = bar.add_task("ingest", total=18)
        bar.start_task(task)
        for done in range(1, 19):
            now[0] = 26.0 + done / 30
            bar.update(task, completed=done)
        assert str(column.render(bar.tasks[0])) == "0.7 files/s"


def test_13_cli_snippets_read_as_text_like_the_web_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("docs").mkdir()
    Path("docs/ferry.md").write_text(
        "# Ferry\n\n## Times\n\nFerries leave **hourly** from the `pier`, see [map](m.html).\n\n"
        "```bash\nferry --book\n```\n\n| Route | Minutes |\n| --- | --- |\n| Pier to isle | 25 |\n"
    )
    assert runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"]).exit_code == 0
    shown = runner.invoke(app, ["search", "ferries pier", "--mode", "bm25"]).output
    assert "Ferries leave hourly from the pier, see map." in shown
    assert "Pier to isle · 25" in shown
    assert not any(raw in shown for raw in ("```", "##", "| ---", "**", "`", "]("))
