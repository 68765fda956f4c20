"""Every setting from the environment (``RAGWRIGHT_<TABLE>__<KEY>``: flag > environment > file >
default, typed, with errors naming the variable) and ``ragwright init`` writing every table at
the defaults the settings classes hold."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from cli_helpers import ingest_sample_docs, runner
from ragwright.answers.settings import AnswerSettings
from ragwright.cli import app
from ragwright.config import TABLES, Config, load_config
from ragwright.errors import ConfigError
from ragwright.federation.settings import FederationSettings
from ragwright.graph.extractors.llm_settings import LLMExtractionSettings
from ragwright.llms.settings import LLMSettings
from ragwright.pipeline.search.request import SearchRequest
from ragwright.planner.settings import PlannerSettings
from ragwright.server.settings import ServerSettings
from ragwright.stores import open_backend, option_defaults


def hits(*arguments: str, env: dict[str, str] | None = None) -> int:
    result = runner.invoke(app, ["search", "install on linux", "--json", *arguments], env=env)
    assert result.exit_code == 0, result.output
    return len(json.loads(result.stdout)["hits"])


def test_a_setting_from_the_environment_sits_between_flag_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    assert hits() == 3  # every chunk: the default top_k is 10
    assert hits(env={"RAGWRIGHT_SEARCH__TOP_K": "1"}) == 1
    assert hits("--top-k", "2", env={"RAGWRIGHT_SEARCH__TOP_K": "1"}) == 2  # flag > env
    Path("ragwright.toml").write_text("[search]\ntop_k = 2\nmode = 'bm25'\n")
    assert hits(env={"RAGWRIGHT_SEARCH__TOP_K": "1"}) == 1  # env > file
    assert hits() == 2


def test_values_are_typed_and_bad_ones_name_their_variable(tmp_path: Path) -> None:
    environ = {
        "RAGWRIGHT_LLM__MODEL": "llama3.1",  # not TOML: text
        "RAGWRIGHT_LLM__READ_TIMEOUT": "30",
        "RAGWRIGHT_LLM__CACHE": "false",
        "RAGWRIGHT_LLM__BUDGET__REQUEST_CALLS": "20",
        "RAGWRIGHT_GRAPH__LLM__ENTITY_TYPES": '["PERSON", "PLACE"]',
        "RAGWRIGHT_INDEX": "not a setting",  # no table and key: not a setting
    }
    config = load_config(None, environ)
    llm = LLMSettings.from_config(config)
    assert (llm.model, llm.read_timeout, llm.cache) == ("llama3.1", 30.0, False)
    assert llm.request_budget.max_calls == 20
    assert LLMExtractionSettings.from_config(config).ontology.entity_types == ("PERSON", "PLACE")

    file = tmp_path / "ragwright.toml"
    file.write_text('[llm]\nmodel = "a"\nmax_retries = 3\n')
    typed = load_config(file, {"RAGWRIGHT_LLM__MODEL": "1.5"})
    assert LLMSettings.from_config(typed).model == "1.5"  # text, as the file's value is
    with pytest.raises(ConfigError, match="RAGWRIGHT_LLM__MAX_RETRIES must be a number"):
        load_config(file, {"RAGWRIGHT_LLM__MAX_RETRIES": "many"})
    with pytest.raises(ConfigError, match=r"RAGWRIGHT_SEARCH__TOP_K\).*top_k must be"):
        SearchRequest.from_config(load_config(None, {"RAGWRIGHT_SEARCH__TOP_K": "abc"}))
    with pytest.raises(ConfigError, match=r"RAGWRIGHT_SERCH__TOP_K: there is no \[serch\]"):
        load_config(None, {"RAGWRIGHT_SERCH__TOP_K": "1"})
    with pytest.raises(ConfigError, match="RAGWRIGHT_LLM__: name a table and a key"):
        load_config(None, {"RAGWRIGHT_LLM__": "1"})


def test_a_bad_variable_is_a_clear_cli_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, ["search", "linux"], env={"RAGWRIGHT_SEARCH__TOP_K": "lots"})
    assert result.exit_code == 2 and "RAGWRIGHT_SEARCH__TOP_K" in result.output
    assert "Traceback" not in result.output


def test_init_writes_every_table_and_its_defaults_parse_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["init"]).exit_code == 0
    written = Path("ragwright.toml").read_text()
    for table in TABLES:
        assert re.search(rf"^(# )?\[{table}\b", written, flags=re.M), table
    # Uncomment each default (not the examples): the settings are the defaults.
    defaults = re.sub(r"^# (\w+ = (?:(?!# example).)*)$", r"\1", written, flags=re.M)
    config = Config(tomllib.loads(defaults))
    assert config.section("search")["top_k"] == SearchRequest().top_k  # really uncommented
    assert LLMSettings.from_config(config) == LLMSettings()
    assert AnswerSettings.from_config(config) == AnswerSettings()
    assert SearchRequest.from_config(config) == SearchRequest()
    assert PlannerSettings.from_config(config) == PlannerSettings()
    assert LLMExtractionSettings.from_config(config) == LLMExtractionSettings()
    assert ServerSettings.from_config(config) == ServerSettings()
    assert FederationSettings.from_config(config) == FederationSettings()
    assert config.section("store") == option_defaults() and "sqlite" in option_defaults()
    open_backend(tmp_path / "kb", config).close()  # each store takes its table as written
    keys = {line.split(" = ")[0] for line in defaults.splitlines() if " = " in line[:40]}
    assert {"max_request_kb", "graph_damping", "min_coverage", "workers", "strict"} <= keys
