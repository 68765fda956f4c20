"""What the CLI tests share: a runner and a small index built by ``ragwright ingest``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright.cli import app

runner = CliRunner()


def ingest_sample_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two documents in ``tmp_path/docs`` ingested (hashing embedder) into ``tmp_path/kb``, which
    ``$RAGWRIGHT_INDEX`` then names; the working directory is ``tmp_path``, with no config file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(
        "# Install\n\nSetting up takes a few minutes.\n\n"
        "## Linux\n\nUse the package manager to install it on Linux.\n",
        "utf-8",
    )
    (docs / "pets.txt").write_text("Cats sleep for most of the day. Dogs like walks.", "utf-8")
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    result = runner.invoke(app, ["ingest", "docs", "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return tmp_path / "kb"
