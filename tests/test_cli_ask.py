"""`ragwright ask` with LLM engines and `ragwright stats`' ledger, against a loopback server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import ingest_sample_docs, runner
from ragwright.cli import app
from ragwright.testing.openai_server import OpenAIServer, Reply, quoting_responder

QUESTION = "How do I install it on Linux?"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(quoting_responder) as running:
        yield running


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return ingest_sample_docs(tmp_path, monkeypatch)


def llm_args(server: OpenAIServer, engine: str = "stuff") -> list[str]:
    return ["--engine", engine, "--llm", "openai", "--model", "m1", "--base-url", server.url]


@pytest.mark.parametrize("engine", ["stuff", "map-reduce", "refine", "flare"])
def test_ask_streams_the_answer_then_numbered_sources(
    index: Path, server: OpenAIServer, engine: str
) -> None:
    result = runner.invoke(app, ["ask", QUESTION, *llm_args(server, engine)])
    assert result.exit_code == 0, result.output
    answer, sources = result.stdout.split("\nSources\n")
    assert "Use the package manager to install it on Linux [1]." in answer
    assert "[1] docs/install.md › Install > Linux chars" in sources
    assert "“Use the package manager to install it on Linux.”" in sources
    assert f"{engine} · m1:" in sources
    assert server.requests and server.requests[-1]["model"] == "m1"
    shown = json.loads(runner.invoke(app, ["docs", "show", "docs/install.md", "--json"]).stdout)
    span = re.search(r"chars (\d+)–(\d+)\s+“(.*?)”", sources)
    assert span is not None
    start, end, quote = int(span.group(1)), int(span.group(2)), span.group(3)
    assert shown["content"][start:end] == quote  # the exact span the line names


def test_ask_json_keeps_its_shape_and_adds_the_llm_fields(
    index: Path, server: OpenAIServer
) -> None:
    offline = runner.invoke(app, ["ask", QUESTION, "--json"])
    llm = runner.invoke(app, ["ask", QUESTION, "--json", *llm_args(server)])
    assert offline.exit_code == 0 and llm.exit_code == 0, llm.output
    plain, written = json.loads(offline.stdout), json.loads(llm.stdout)
    assert set(plain) == set(written)
    assert {"question", "answer", "found", "citations", "hits"} <= set(written)
    assert plain["engine"] == "extractive" and plain["usage"]["calls"] == 0
    assert written["engine"] == "stuff" and written["model"] == "m1"
    assert written["usage"] == {
        "calls": 1, "cached_calls": 0, "prompt_tokens": 10, "completion_tokens": 5
    }  # fmt: skip
    shown = json.loads(runner.invoke(app, ["docs", "show", "docs/install.md", "--json"]).stdout)
    citation = written["citations"][0]
    assert shown["content"][citation["char_start"] : citation["char_end"]] == citation["quote"]


def test_config_file_sets_the_llm_and_prices_and_stats_shows_the_ledger(
    index: Path, server: OpenAIServer, tmp_path: Path
) -> None:
    (tmp_path / "ragwright.toml").write_text(
        f'[llm]\nengine = "stuff"\nmodel = "m2"\nbase_url = "{server.url}"\n\n'
        "[llm.prices.m2]\ninput = 1000.0\noutput = 2000.0\n",
        "utf-8",
    )
    first = runner.invoke(app, ["ask", QUESTION])
    assert first.exit_code == 0, first.output
    assert "about 0.020000 in configured prices" in first.stdout  # 10 * 1e3 + 5 * 2e3 per 1e6
    again = runner.invoke(app, ["ask", QUESTION])
    assert "0 LLM calls, 1 from the cache" in again.stdout
    runner.invoke(app, ["ask", QUESTION, "--no-cache"])
    assert len(server.requests) == 2
    stats = json.loads(runner.invoke(app, ["stats", "--json"]).stdout)
    assert stats["llm_ledger"] == [
        {"model": "m2", "calls": 2, "prompt_tokens": 20, "completion_tokens": 10, "cost": 0.04}
    ]
    assert stats["llm_cache"] == {"entries": 1, "hits": 1}
    text = runner.invoke(app, ["stats"]).stdout
    assert "LLM ledger" in text and "m2" in text and "0.040000" in text


def test_budgets_and_server_failures_are_one_line_errors(index: Path, server: OpenAIServer) -> None:
    spent = runner.invoke(app, ["ask", QUESTION, *llm_args(server, "map-reduce"),
                                "--max-llm-calls", "1"])  # fmt: skip
    assert spent.exit_code == 2
    assert "budget of 1 LLM calls is spent" in spent.output
    server.script(Reply.status(401, "Incorrect API key"))
    refused = runner.invoke(app, ["ask", QUESTION, *llm_args(server), "--no-cache"])
    assert refused.exit_code == 2 and "Incorrect API key" in refused.output


def test_llm_engines_need_a_model(index: Path) -> None:
    result = runner.invoke(app, ["ask", QUESTION, "--engine", "refine"])
    assert result.exit_code == 2 and "no LLM model" in result.output
    bad = runner.invoke(app, ["ask", QUESTION, "--engine", "oracle"])
    assert bad.exit_code == 2 and "unknown answer engine" in bad.output
