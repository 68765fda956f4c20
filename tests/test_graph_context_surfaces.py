"""Graph context on every surface that asks: ``ask --graph-context``, ``POST /v1/ask`` with
``graph_context`` and the MCP ``ask`` tool, against the loopback OpenAI-compatible server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from cli_helpers import ingest_sample_docs, runner
from graph_helpers import FixedGraph, snapshot
from ragwright import Index
from ragwright.cli import app
from ragwright.llms.settings import LLMSettings
from ragwright.mcp_server import build_server
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, quoting_responder
from server_helpers import GUIDE, serve

QUESTION = "How do I install it on Linux?"
_GRAPH_NOTE = re.compile(r"BEGIN GRAPH \d+ (\w+)\n(.*?)\nEND GRAPH \d+ \1", re.DOTALL)


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
    with Index(tmp_path / "index", embedder=HashingEmbedder(), llm_settings=settings) as built:
        assert built.ingest([docs]).ok
        every_chunk = [chunk.id for chunk in built.documents.export.chunk_page(None, 100)]
    graph = FixedGraph(
        snapshot({"Linux": every_chunk, "pip": every_chunk}, [("Linux", "pip", 0.7)])
    )
    with Index(tmp_path / "index", llm_settings=settings, graph=graph) as index:
        yield index


def graph_notes(model: OpenAIServer) -> list[str]:
    return [
        match.group(2)
        for body in model.requests
        for match in _GRAPH_NOTE.finditer(body["messages"][-1]["content"])
    ]


def test_http_ask_takes_graph_context(kb: Index, model: OpenAIServer) -> None:
    with serve(kb) as url:
        body: dict[str, Any] = {"question": QUESTION, "engine": "stuff"}
        plain = httpx.post(f"{url}/v1/ask", json=body, timeout=30)
        assert plain.status_code == 200 and graph_notes(model) == []
        graphed = httpx.post(f"{url}/v1/ask", json={**body, "graph_context": True}, timeout=30)
        wrong = httpx.post(f"{url}/v1/ask", json={**body, "graph_context": "yes"}, timeout=30)
        extractive = httpx.post(
            f"{url}/v1/ask", json={"question": QUESTION, "graph_context": True}, timeout=30
        )
    assert graphed.status_code == 200 and graphed.json()["citations"]
    [note] = graph_notes(model)
    assert "- Linux" in note and "- Linux — pip: 0.70" in note
    assert wrong.status_code == 422
    assert extractive.status_code == 400 and "LLM engines" in extractive.text


def test_the_mcp_ask_tool_takes_graph_context(kb: Index, model: OpenAIServer) -> None:
    async def main() -> Any:
        async with Client(build_server(kb)) as client:
            arguments = {"question": QUESTION, "engine": "stuff", "graph_context": True}
            return await client.call_tool("ask", arguments)

    result = anyio.run(main)
    assert not result.is_error, result.content
    [note] = graph_notes(model)
    assert "- pip" in note


def test_cli_ask_graph_context_is_refused_for_the_extractive_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, ["ask", QUESTION, "--graph-context"])
    assert result.exit_code == 2 and "graph context is for the LLM engines" in result.output
    assert "Traceback" not in result.output
    plain = runner.invoke(app, ["ask", QUESTION, "--no-graph-context"])
    assert plain.exit_code == 0, plain.output
