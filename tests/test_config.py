from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.config import CONFIG_ENV, Config, load_config
from ragwright.errors import ConfigError


def test_no_file_gives_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    config = load_config()
    assert config == Config()
    assert config.section("llm") == {}


def test_reads_the_working_directory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    (tmp_path / "ragwright.toml").write_text('[llm]\nmodel = "m"\n')
    assert load_config().section("llm") == {"model": "m"}


def test_explicit_beats_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "env.toml").write_text('[llm]\nmodel = "env"\n')
    (tmp_path / "explicit.toml").write_text('[llm]\nmodel = "explicit"\n')
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "env.toml"))
    assert load_config().section("llm")["model"] == "env"
    assert load_config(tmp_path / "explicit.toml").section("llm")["model"] == "explicit"


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[llm\nmodel = 1\n")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_config(path)


def test_a_section_that_is_not_a_table_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('llm = "openai"\n')
    with pytest.raises(ConfigError, match=r"\[llm\] must be a table"):
        load_config(path).section("llm")
