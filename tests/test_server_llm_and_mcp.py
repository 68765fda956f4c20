"""`ragwright serve` with the other surfaces wired in: LLM answer engines behind /v1/ask (the
loopback OpenAI-compatible server stands in for the model) and the MCP server at /mcp/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from typer.testing import CliRunner

from ragwright import Index
from ragwright.cli import app as cli
from ragwright.config import load_config
from ragwright.llms.settings import ENGINES, LLMSettings
from ragwright.server import ServerSettings, mcp_mount
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, Reply, quoting_responder
from server_helpers import GUIDE, model_breaking_mid_stream, serve, sse_events

QUESTION = "How do I install it on Linux?"


@pytest.fixture
def model() -> Iterator[OpenAIServer]:
    with OpenAIServer(quoting_responder) as server:
        yield server


@pytest.fixture
def kb(tmp_path: Path, model: OpenAIServer) -> Iterator[Index]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    settings = LLMSettings(model="test", base_url=model.url, retry_backoff=0.0, max_retries=1)
    with Index(tmp_path / "index", embedder=HashingEmbedder(), llm_settings=settings) as index:
        assert index.ingest([docs]).ok
        yield index


def test_ask_streams_an_llm_engine_answer_with_resolved_citations(
    kb: Index, model: OpenAIServer
) -> None:
    with serve(kb) as url:
        body = {"question": QUESTION, "engine": "stuff", "stream": True}
        response = httpx.post(f"{url}/v1/ask", json=body, timeout=30)
    assert response.status_code == 200
    events = sse_events(response.text)
    assert [name for name, _ in events][-2:] == ["answer", "done"]
    answer = events[-2][1]
    pieces = "".join(data["text"] for name, data in events if name == "delta")
    assert pieces == answer["answer"]
    assert answer["engine"] == "stuff" and answer["usage"]["calls"] >= 1
    assert answer["citations"], answer
    for citation in answer["citations"]:
        document = kb.documents.get(citation["document_id"])
        assert document is not None
        span = document.content[citation["char_start"] : citation["char_end"]]
        assert span == citation["quote"]
    assert "pip install ragwright" in answer["answer"]
    assert model.requests, "the engine never called the model"


def test_ask_refuses_an_unknown_engine(kb: Index) -> None:
    with serve(kb) as url:
        response = httpx.post(f"{url}/v1/ask", json={"question": QUESTION, "engine": "oracle"})
    assert response.status_code == 422
    assert "unknown answer engine 'oracle'" in response.text


def test_a_failing_model_is_a_bad_gateway_not_a_crash(kb: Index, model: OpenAIServer) -> None:
    model.script(*[Reply.status(500, "upstream exploded")] * 4)
    with serve(kb) as url:
        response = httpx.post(
            f"{url}/v1/ask", json={"question": QUESTION, "engine": "stuff"}, timeout=30
        )
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "llm_failed"


def test_mcp_tools_are_served_at_slash_mcp(kb: Index) -> None:
    async def main(url: str) -> Any:
        async with Client(url) as client:
            tools = await client.list_tools()
            found = await client.call_tool("search", {"query": "install linux", "top_k": 3})
            return {tool.name for tool in tools.tools}, found

    with serve(kb, mounts=mcp_mount(kb, "127.0.0.1")) as url:
        names, found = anyio.run(main, f"{url}/mcp/")
    assert {"search", "ask", "get_chunk", "get_document", "list_sources"} <= names
    assert not found.is_error
    assert found.structured_content["hits"][0]["source"]["text"] == "docs/guide.md"


def test_mcp_at_slash_mcp_needs_a_key_when_keys_are_configured(kb: Index, tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    added = CliRunner().invoke(
        cli, ["keys", "add", "reader", "--scope", "read", "--config", str(config)]
    )
    key = added.stdout.strip().splitlines()[-1]
    settings = ServerSettings.from_config(load_config(config))
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    with serve(kb, settings, mounts=mcp_mount(kb, "127.0.0.1")) as url:
        anonymous = httpx.post(f"{url}/mcp/", json=request, headers=accept)
        keyed = httpx.post(
            f"{url}/mcp/", json=request, headers=accept | {"Authorization": f"Bearer {key}"}
        )
    assert anonymous.status_code == 401
    assert keyed.status_code != 401 and keyed.status_code < 500


def test_stats_name_the_default_engine_and_the_model(kb: Index) -> None:
    with serve(kb) as url:
        answers = httpx.get(f"{url}/v1/stats").json()["answers"]
    assert answers == {"default_engine": "extractive", "engines": list(ENGINES), "model": "test"}


def test_stats_carry_the_llm_ledger_and_cache_as_the_cli_does(kb: Index) -> None:
    with serve(kb) as url:
        asked = httpx.post(f"{url}/v1/ask", json={"question": QUESTION, "engine": "stuff"})
        assert asked.status_code == 200
        stats = httpx.get(f"{url}/v1/stats").json()
    printed = CliRunner().invoke(cli, ["stats", "--index", str(kb.location), "--json"])
    assert printed.exit_code == 0, printed.output
    expected = json.loads(printed.stdout)
    assert set(stats) - {"answers"} == set(expected)
    assert [row["calls"] for row in stats["llm_ledger"]] == [1]
    assert (stats["llm_ledger"], stats["llm_cache"]) == (
        expected["llm_ledger"],
        expected["llm_cache"],
    )


@pytest.fixture
def breaking_model() -> Iterator[str]:
    with model_breaking_mid_stream("Run pip ") as url:
        yield url


def test_a_model_stream_breaking_mid_answer_ends_the_sse_with_an_error_event(
    tmp_path: Path, breaking_model: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    settings = LLMSettings(model="test", base_url=breaking_model, retry_backoff=0.0)
    with Index(tmp_path / "index", embedder=HashingEmbedder(), llm_settings=settings) as index:
        assert index.ingest([docs]).ok
        with serve(index) as url:
            body = {"question": QUESTION, "engine": "stuff", "stream": True}
            response = httpx.post(f"{url}/v1/ask", json=body, timeout=30)
            still_serving = httpx.get(f"{url}/healthz")
    # The status line went out with the first piece; the failure is the stream's last event.
    assert response.status_code == 200
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[0] == "delta" and names[-1] == "error", names
    assert "answer" not in names and "done" not in names
    error = events[-1][1]["error"]
    assert (error["status"], error["code"]) == (502, "llm_failed")
    assert "broke off" in error["message"]
    assert still_serving.status_code == 200
