"""Document text printed to a terminal carries no control characters: escape sequences in a
document cannot clear the screen, recolour it or set the window title."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_helpers import runner
from ragwright.cli import app
from ragwright.cli._common import terminal_safe

HOSTILE = (
    "# Escapes \x1b[31mred\x1b[0m\n\n"
    "Clear \x1b[2J the screen, set the title \x1b]0;pwned\x07, a C1 CSI \x9b1m, "
    "a backspace \x08 and a delete \x7f. Tabs\tand newlines stay.\n"
)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "escapes\x1b[1m.md").write_text(HOSTILE, encoding="utf-8")
    result = runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return tmp_path / "kb"


@pytest.mark.parametrize(
    "command",
    [
        ["search", "clear the screen"],
        ["search", "clear the screen", "--mode", "bm25"],
        ["docs", "show", "docs/escapes\x1b[1m.md", "--chunks"],
        ["docs", "list"],
        ["ask", "what clears the screen?"],
    ],
)
def test_printed_document_text_has_no_control_characters(index: Path, command: list[str]) -> None:
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "\ufffd" in result.output  # the escapes were there, neutralized
    assert CONTROL.findall(result.output.replace("\n", "")) == []


def test_terminal_safe_keeps_text_tabs_and_newlines() -> None:
    assert terminal_safe("a\tb\nc é ✓") == "a\tb\nc é ✓"
    assert terminal_safe("\x1b[2J\x9b\x00") == "\ufffd[2J\ufffd\ufffd"
