"""A retrieval mode is one module: a toy mode registered at run time is searched from Python,
offered and accepted by the CLI, the HTTP API (its schema too), the MCP tools and the
rag-connector spec, and the LLM planner may route to it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.connector.spec import connect, connector_spec
from ragwright.errors import ConfigError
from ragwright.mcp_server import build_server
from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.pipeline.search.arms import Arms
from ragwright.pipeline.search.context import SearchContext
from ragwright.pipeline.search.modes import (
    mode_names,
    plannable_modes,
    register_mode,
    retrieval_mode,
    unregister_mode,
)
from ragwright.pipeline.search.request import SearchRequest
from ragwright.planner import LLMPlanner
from ragwright.query.model import QueryProcessor
from ragwright.testing import HashingEmbedder
from ragwright.testing.llm import ScriptedLLM
from server_helpers import serve


class ReversedBM25:
    """A toy mode: the BM25 ranking, worst first."""

    name = "toy"
    plannable = True
    fused = False
    arms: Arms | None = None

    def unavailable(self, context: SearchContext, caller: Caller) -> str | None:
        return None

    def search(
        self,
        context: SearchContext,
        query: str,
        request: SearchRequest,
        query_processors: Sequence[QueryProcessor],
    ) -> list[Hit]:
        where = request.caller.scope(request.where)
        return context.store.keyword_search(query, request.top_k, where)[::-1]


@pytest.fixture
def toy() -> Iterator[ReversedBM25]:
    mode = ReversedBM25()
    register_mode(mode)
    yield mode
    unregister_mode(mode.name)


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("Kelp forests grow fast. Kelp is a brown alga.\n")
    (folder / "b.md").write_text("Otters eat urchins that graze on kelp.\n")
    (folder / "c.md").write_text("Tides rise twice a day.\n")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest(folder).ok
    return tmp_path / "kb"


def sources(hits: list[Hit]) -> list[str]:
    return [Path(hit.source).name for hit in hits]


def test_the_toy_is_searched_from_python(toy: ReversedBM25, index_dir: Path) -> None:
    with Index(index_dir, embedder=HashingEmbedder()) as kb:
        bm25 = sources(kb.search("kelp", mode="bm25"))
        assert len(bm25) == 2
        assert sources(kb.search("kelp", mode="toy")) == bm25[::-1]
        assert kb.search("kelp", mode="toy", min_score=0.0)  # its scores are not fused
    assert "toy" in mode_names() and "toy" in plannable_modes()
    assert retrieval_mode("toy") is toy


def test_a_built_in_name_cannot_be_taken_and_gone_means_unknown() -> None:
    class Impostor(ReversedBM25):
        name = "hybrid"

    with pytest.raises(ConfigError, match="built-in search mode"):
        register_mode(Impostor())
    with pytest.raises(ConfigError, match="unknown search mode 'toy'"):
        SearchRequest(mode="toy")


def test_the_cli_accepts_the_toy(toy: ReversedBM25, index_dir: Path) -> None:
    found = runner.invoke(
        app, ["search", "kelp", "--mode", "toy", "--json", "--index", str(index_dir)]
    )
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["mode"] == "toy"
    wrong = runner.invoke(app, ["search", "kelp", "--mode", "nope", "--index", str(index_dir)])
    assert wrong.exit_code == 2 and "toy" in wrong.output


def test_the_http_api_offers_and_accepts_the_toy(toy: ReversedBM25, index_dir: Path) -> None:
    with Index(index_dir, embedder=HashingEmbedder()) as kb, serve(kb) as url:
        schema = httpx.get(f"{url}/openapi.json").json()["components"]["schemas"]
        found = httpx.post(f"{url}/v1/search", json={"query": "kelp", "mode": "toy"})
        wrong = httpx.post(f"{url}/v1/search", json={"query": "kelp", "mode": "nope"})
    mode = schema["SearchRequest"]["properties"]["mode"]["anyOf"][0]
    assert "toy" in mode["enum"]
    assert found.status_code == 200 and found.json()["mode"] == "toy"
    assert wrong.status_code == 422


def test_the_mcp_tools_offer_and_accept_the_toy(toy: ReversedBM25, index_dir: Path) -> None:
    with Index(index_dir, embedder=HashingEmbedder()) as kb:

        async def main() -> tuple[Any, Any]:
            async with Client(build_server(kb)) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                called = await client.call_tool("search", {"query": "kelp", "mode": "toy"})
                return tools, called

        tools, called = anyio.run(main)
    assert "toy" in tools["search"].input_schema["properties"]["mode"]["enum"]
    assert "toy" in tools["ask"].input_schema["properties"]["mode"]["enum"]
    assert not called.is_error, called.content


def test_the_connector_spec_and_the_planner_offer_the_toy(
    toy: ReversedBM25, index_dir: Path
) -> None:
    modes = next(p for p in connector_spec().params if p["name"] == "mode")
    assert "toy" in modes["choices"]
    pipeline, connection = connect({"index": str(index_dir), "mode": "toy"})
    assert connection["mode"] == "toy"
    pipeline.close()
    planner = LLMPlanner(ScriptedLLM('{"mode": "toy", "reason": "a toy"}'), modes=plannable_modes())
    assert planner.route("what grows fast?").mode == "toy"
