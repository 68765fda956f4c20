"""``[sources.NAME]`` settings and secrets, and the sync engine's rules seen through a source
of our own: typed errors for bad settings, secrets only from the environment or a 0600 file,
pruning only from a complete listing and only what was recorded before it began."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright import Index
from ragwright.cli import app
from ragwright.config import Config
from ragwright.errors import ConfigError, CredentialsError, RegistryError
from ragwright.ports import ItemRecord
from ragwright.sources import open_source
from ragwright.sources.settings import SourceSettings, read_secret_file
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from sync_helpers import Scripted


def settings(table: dict[str, object], environ: dict[str, str] | None = None) -> SourceSettings:
    found = SourceSettings.from_config(Config({"sources": {"s": table}}), "s")
    found.environ = environ or {}
    return found


def test_secrets_come_from_the_environment_or_an_owner_only_file(tmp_path: Path) -> None:
    found = settings({"type": "x", "token_env": "TOKEN"}, {"TOKEN": "abc"})
    assert found.secret("token") == "abc"
    with pytest.raises(CredentialsError, match="TOKEN"):
        settings({"type": "x", "token_env": "TOKEN"}).secret("token")
    file = tmp_path / "token"
    file.write_text("from-file\n")
    for mode in (0o640, 0o604, 0o660):
        file.chmod(mode)
        with pytest.raises(CredentialsError, match="chmod 600"):
            read_secret_file(file, "token_file")
    file.chmod(0o600)
    assert settings({"type": "x", "token_file": str(file)}).secret("token") == "from-file"
    with pytest.raises(CredentialsError, match="not read from the configuration file"):
        settings({"type": "x", "token": "literal"}).secret("token")
    with pytest.raises(ConfigError, match="not both"):
        settings({"type": "x", "token_env": "A", "token_file": str(file)}).secret("token")
    with pytest.raises(CredentialsError, match="cannot read"):
        read_secret_file(tmp_path / "missing", "token_file")


def test_bad_tables_are_typed_errors() -> None:
    with pytest.raises(RegistryError, match="unknown source type 'nope'"):
        open_source(settings({"type": "nope"}))
    with pytest.raises(ConfigError, match="no setting 'max_deph'"):
        open_source(settings({"type": "website", "url": "http://127.0.0.1:9/", "max_deph": 2}))
    with pytest.raises(ConfigError, match="max_pages must be an integer"):
        open_source(settings({"type": "website", "url": "http://127.0.0.1:9/", "max_pages": "x"}))
    with pytest.raises(ConfigError, match="http"):
        open_source(settings({"type": "website", "url": "ftp://example.test/"}))
    with pytest.raises(ConfigError, match="needs type"):
        SourceSettings.from_config(Config({"sources": {"s": {}}}), "s")
    with pytest.raises(ConfigError, match="no source 'other'"):
        SourceSettings.from_config(Config({"sources": {"s": {"type": "files"}}}), "other")


def test_the_cli_reports_bad_sources_without_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    runner = CliRunner()
    added = runner.invoke(app, ["sync", "add", "web", "--type", "website", "--set",
                                "url=http://127.0.0.1:9/", "--config", str(config)])  # fmt: skip
    assert added.exit_code == 0, added.output
    assert config.stat().st_mode & 0o777 == 0o600
    again = runner.invoke(app, ["sync", "add", "web", "--type", "website", "--config", str(config)])
    assert again.exit_code == 2 and "already has a source named 'web'" in again.output
    unknown = runner.invoke(app, ["sync", "add", "x", "--type", "ftp", "--config", str(config)])
    assert unknown.exit_code == 2 and "unknown source type 'ftp'" in unknown.output
    secret = runner.invoke(app, ["sync", "add", "api", "--type", "graphql", "--set",
                                 "api_key=abc", "--config", str(config)])  # fmt: skip
    assert secret.exit_code == 2 and "api_key_env" in secret.output
    assert "abc" not in config.read_text()
    bad = runner.invoke(
        app, ["sync", "add", "bad name", "--type", "files", "--config", str(config)]
    )
    assert bad.exit_code == 2 and "source name" in bad.output
    index = ["--index", str(tmp_path / "kb"), "--embedder", "hashing", "--config", str(config)]
    missing = runner.invoke(app, ["sync", "run", "nothere", *index])
    assert missing.exit_code == 2 and "no source 'nothere'" in missing.output
    # Nothing listens on port 9: the source fails, typed, and the run exits 1.
    down = runner.invoke(app, ["sync", "run", "web", *index])
    assert down.exit_code == 1 and "robots.txt could not be read" in down.output
    assert "Traceback" not in down.output


def test_prunes_only_after_a_complete_listing(tmp_path: Path) -> None:
    source = Scripted()
    source.items = {"a": "Alpha.", "b": "Beta.", "c": "Gamma."}
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert len(kb.sync_source("m", source).added) == 3
        assert kb.sync_checkpoint("m").cursor == "end"
        del source.items["c"]
        source.complete = False  # e.g. an incremental listing
        assert kb.sync_source("m", source).removed == []
        source.complete, source.broken_after = True, 1  # complete, but it broke off
        report = kb.sync_source("m", source)
        assert report.removed == [] and not report.complete
        assert [f.reason for f in report.failed] == ["the server went away"]
        source.broken_after = None
        assert kb.sync_source("m", source).removed == ["mem:c"]
        source.fetched.clear()
        assert kb.sync_source("m", source).unchanged == 2 and source.fetched == []


def test_an_item_recorded_after_the_listing_began_is_not_pruned(tmp_path: Path) -> None:
    """The frozen time: another sync records an item while this one lists; this one's
    complete listing did not see it, yet it is kept."""
    source = Scripted()
    source.items = {"a": "Alpha."}
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.sync_source("m", source)
        other = SQLiteStore(tmp_path / "kb")  # another process's sync

        def meanwhile() -> None:
            record = ItemRecord("Late.", "mem:late", "", time.time())
            other.record_items("m", [("late", record)], [])

        source.during = meanwhile
        try:
            report = kb.sync_source("m", source)
        finally:
            other.close()
        assert report.removed == [] and "late" in kb.sync_checkpoint("m").items


def test_a_document_deleted_behind_the_checkpoint_is_fetched_again(tmp_path: Path) -> None:
    source = Scripted()
    source.items = {"a": "Alpha.", "b": "Beta."}
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.sync_source("m", source)
        assert kb.documents.delete("mem:a")
        source.fetched.clear()
        assert kb.sync_source("m", source).added == ["mem:a"]
        assert source.fetched == ["a"]
