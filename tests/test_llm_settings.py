"""The [llm] table of ragwright.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright.config import load_config
from ragwright.errors import ConfigError, RegistryError
from ragwright.llms import create_llm, llm_names
from ragwright.llms.openai import OpenAIChat
from ragwright.llms.settings import Budget, LLMSettings, Price


def settings_from(tmp_path: Path, text: str) -> LLMSettings:
    path = tmp_path / "ragwright.toml"
    path.write_text(text, "utf-8")
    return LLMSettings.from_config(load_config(path))


def test_no_table_gives_the_offline_defaults(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "")
    assert settings.engine == "extractive" and settings.cache
    assert settings.request_budget == Budget() and settings.prices == {}


def test_a_full_table_is_read(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path,
        """
[llm]
provider = "openai"
model = "llama3.1"
base_url = "http://localhost:11434/v1"
api_key_env = "OLLAMA_KEY"
engine = "map-reduce"
connect_timeout = 2
read_timeout = 300.5
max_retries = 5
breaker_failures = 3
cache = false

[llm.budget]
request_calls = 10
ingest_tokens = 100000

[llm.prices."llama3.1"]
input = 0
output = 0.5
""",
    )
    assert (settings.model, settings.base_url, settings.engine) == (
        "llama3.1",
        "http://localhost:11434/v1",
        "map-reduce",
    )
    assert settings.connect_timeout == 2.0 and settings.read_timeout == 300.5
    assert (settings.max_retries, settings.breaker_failures, settings.cache) == (5, 3, False)
    assert settings.request_budget == Budget(max_calls=10)
    assert settings.ingest_budget == Budget(max_tokens=100000)
    assert settings.prices == {"llama3.1": Price(0.0, 0.5)}
    llm = create_llm(settings)
    assert isinstance(llm, OpenAIChat) and llm.model == "llama3.1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[llm]\nmodle = "x"', "unknown key 'modle'"),
        ("[llm]\nmax_retries = -1", "max_retries"),
        ('[llm]\ncache = "yes"', "cache"),
        ('[llm]\nengine = "oracle"', "unknown answer engine"),
        ("[llm.budget]\nrequest_calls = 0", "request_calls"),
        ("[llm.budget]\nper_day = 3", "unknown keys"),
        ("[llm.prices.m]\ninput = 1", "input and output"),
        ("[llm]\nprices = 3", "prices must be a table"),
    ],
)
def test_bad_values_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        settings_from(tmp_path, text)
    assert "ragwright.toml" in str(caught.value)


def test_providers_come_from_entry_points() -> None:
    assert "openai" in llm_names()
    with pytest.raises(RegistryError, match="unknown LLM provider 'nope'"):
        create_llm(LLMSettings(provider="nope", model="m"))


def test_command_line_overrides_apply_when_given() -> None:
    settings = LLMSettings(model="a").with_overrides(model="b", base_url=None, cache=False)
    assert (settings.model, settings.base_url, settings.cache) == (
        "b",
        LLMSettings().base_url,
        False,
    )
