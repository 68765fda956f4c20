"""The README's first code block runs as written from a fresh folder, offline.

Its lines that need a server or run until stopped are named in `NOT_RUN` (and in the README):
`watch` (tests/test_watch*.py), `serve` (tests/test_server*.py, test_serve_command.py),
`mcp` (tests/test_mcp.py), PostgreSQL (tests/test_postgres_*.py) and Ray
(tests/test_ray_ingest.py). Every other line runs here, in this process, against a small
`docs/` folder (the clone's own docs would take minutes to embed on a CI machine)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cli_helpers import runner
from ragwright.cli import app

README = Path(__file__).parents[1] / "README.md"

#: What a line that is not run contains, and why it is not.
NOT_RUN = {
    "make demo": "installs into .venv (make test runs from it)",
    "ragwright watch": "runs until stopped",
    "ragwright serve": "a server, until stopped",
    "ragwright mcp": "a server on stdio, until stopped",
    "postgresql://": "needs a PostgreSQL server",
    "--engine ray": "starts a Ray cluster",
}

DOCS = {
    "quickstart.md": "# Quick start\n\nInstall ragwright, then ingest a folder of documents. "
    "Chunk ids are computed from the content: the SHA-256 of the document id and the text.\n",
    "concepts.md": "# Concepts\n\n## Chunks\n\nA chunk is a span of a document. Its id is "
    "content-addressed, so re-ingesting unchanged text is a no-op.\n\n## Storage\n\n"
    "SQLite holds the documents, the chunks and the vectors; PostgreSQL can hold them too.\n",
    "graph.md": "# Graph\n\nThe Entity Graph links Alice Walker and Bob Marley. Alice Walker "
    "met Bob Marley in Kingston. Bob Marley sang in Kingston with The Wailers.\n",
}


def first_block() -> list[str]:
    text = README.read_text("utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README starts with a bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def commands(line: str) -> list[list[str]]:
    """The ragwright commands of a line: its comment dropped, split on ``&&``."""
    code = line.split(" # ", 1)[0]
    return [shlex.split(part) for part in code.split("&&")]


def test_the_readme_shows_the_whole_product() -> None:
    text = " ".join(first_block())
    for feature in (
        "ingest", "search", "ask", "--graph", "graph communities", "--mode global", "watch",
        "sync", "reindex", "serve", "mcp", "postgresql://", "--engine ray", "--index quick/",
    ):  # fmt: skip
        assert feature in text, feature


def test_the_readme_commands_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_INDEX", raising=False)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    (tmp_path / "docs").mkdir()
    for name, content in DOCS.items():
        (tmp_path / "docs" / name).write_text(content, "utf-8")
    ran, skipped = [], []
    for line in first_block():
        if any(marker in line for marker in NOT_RUN):
            skipped.append(line)
            continue
        for command in commands(line):
            assert command[0] == "ragwright", line
            result = runner.invoke(app, command[1:])
            assert result.exit_code == 0, f"{line}\n{result.output}"
            assert "Traceback" not in result.output
            ran.append((command, result.stdout))
    assert len(skipped) == len(NOT_RUN)  # one line each: a new line must run or be named
    outputs = {" ".join(command[1:3]): stdout for command, stdout in ran}
    assert "docs/quickstart.md" in outputs["search how are chunk ids computed"]
    assert "[1]" in outputs["ask How are chunk ids computed?"]
    assert "docs/quickstart.md" in outputs["search chunk ids"]  # two indexes, one ranking
    assert (tmp_path / "ragwright.toml").read_text("utf-8").count("[sources.site]") == 1


def test_the_docs_index_links_every_page() -> None:
    docs = README.parent / "docs"
    index = (docs / "index.md").read_text("utf-8")
    pages = {page.name for page in docs.glob("*.md")} - {"index.md"}
    assert {page for page in pages if f"]({page}" not in index} == set()
    assert "[docs/index.md](docs/index.md)" in README.read_text("utf-8")
