from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.config import CONFIG_ENV, Config, load_config
from ragwright.errors import ConfigError
from ragwright.pipeline.search.request import SearchRequest


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


def test_the_search_table_sets_search_defaults(tmp_path: Path) -> None:
    path = tmp_path / "ragwright.toml"
    path.write_text('[search]\nmode = "bm25"\ntop_k = 3\nfusion = "rrf"\nbm25_weight = 2\n')
    request = SearchRequest.from_config(load_config(path))
    assert request == SearchRequest(mode="bm25", top_k=3, fusion="rrf", bm25_weight=2.0)
    assert SearchRequest.from_config(Config()) == SearchRequest()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("depth = 5", r"\[search\]: unknown setting depth; known: mode, top_k"),
        ('filter = "x = 1"', "unknown setting filter"),
        ('fusion = "max"', r"\[search\]: unknown fusion 'max'; choose one of rrf, convex"),
        ("rrf_k = 0", "rrf_k must be a positive integer"),
        ("vector_weight = -1", "vector_weight must be a number >= 0"),
        ("top_k = true", "top_k must be between 1 and"),
    ],
)
def test_a_bad_search_table_names_the_file_and_the_key(
    tmp_path: Path, table: str, message: str
) -> None:
    path = tmp_path / "ragwright.toml"
    path.write_text(f"[search]\n{table}\n")
    with pytest.raises(ConfigError, match=message) as caught:
        SearchRequest.from_config(load_config(path))
    assert str(path) in str(caught.value)
