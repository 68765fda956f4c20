"""``sync add`` refuses a source that would cover documents another configured source covers
(the sync-time guard stays for sources that cannot say their scope)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragwright.cli import app
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.sources import FolderSource, SourceSettings, open_source
from ragwright.sources.scopes import refuse_overlap, scopes_of

runner = CliRunner()


def add(config: Path, name: str, kind: str, *settings: str) -> tuple[int, str]:
    sets = [part for setting in settings for part in ("--set", setting)]
    result = runner.invoke(
        app, ["sync", "add", name, "--type", kind, *sets, "--config", str(config)]
    )
    return result.exit_code, result.output


def test_sync_add_refuses_a_source_overlapping_another(tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    (tmp_path / "docs" / "guides").mkdir(parents=True)
    (tmp_path / "docs-old").mkdir()
    assert add(config, "docs", "files", 'paths=["docs"]')[0] == 0
    code, output = add(config, "guides", "files", 'paths=["docs/guides"]')
    assert code == 2 and "source 'guides' would cover documents source 'docs' covers" in output
    assert add(config, "old", "files", 'paths=["docs-old"]')[0] == 0  # a sibling, not inside
    assert add(config, "site", "website", "url=https://example.test/blog/")[0] == 0
    code, output = add(config, "site2", "website", "url=https://example.test/shop")
    assert code == 2 and "'https://example.test/'" in output  # one host: one crawl's pages
    assert add(config, "other", "website", "url=https://example.org/")[0] == 0
    assert "guides" not in config.read_text() and "site2" not in config.read_text()


def test_buckets_overlap_by_prefix_and_unknown_scopes_are_left_to_the_sync(
    tmp_path: Path,
) -> None:
    base = {"type": "s3", "bucket": "docs", "endpoint_url": "http://127.0.0.1:9"}
    config = Config({"sources": {"all": {**base, "prefix": "team/"}}}, tmp_path / "r.toml")
    refuse_overlap(config, "other", {**base, "bucket": "papers"})
    with pytest.raises(ConfigError, match="source 'a' would cover documents source 'all'"):
        refuse_overlap(config, "a", {**base, "prefix": "team/a/"})
    api = {"type": "graphql", "url": "http://127.0.0.1:9/graphql", "query_file": "q.graphql"}
    refuse_overlap(config, "api", api)  # a GraphQL API cannot say: not refused here
    folder = open_source(SourceSettings("f", "files", {"paths": ["a"]}, base=tmp_path))
    assert isinstance(folder, FolderSource)
    assert scopes_of(folder) == ((tmp_path / "a").resolve().as_posix() + "/",)
