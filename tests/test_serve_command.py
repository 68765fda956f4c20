"""`ragwright serve` as a process, reached the way a user's tools reach it: an MCP client
through the streamable-HTTP endpoint at /mcp/ and a script through /v1, behind API keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from typer.testing import CliRunner

from ragwright.cli import app as cli
from server_helpers import build_index, serve_process

pytestmark = pytest.mark.slow


def add_key(config: Path, name: str, scope: str) -> str:
    result = CliRunner().invoke(
        cli, ["keys", "add", name, "--scope", scope, "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A `ragwright serve` process over a small index with one read key: (URL, key)."""
    build_index(tmp_path).close()
    config = tmp_path / "ragwright.toml"
    key = add_key(config, "assistant", "read")
    with serve_process(str(tmp_path / "index"), tmp_path, "--config", str(config)) as url:
        yield url, key


async def use_mcp(url: str, key: str) -> dict[str, Any]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        found = await client.call_tool("search", {"query": "install linux", "top_k": 3})
        hit = found.structured_content["hits"][0]
        chunk = await client.call_tool("get_chunk", {"chunk_id": hit["chunk_id"]})
        answer = await client.call_tool("ask", {"question": "How do I install it on Linux?"})
        return {
            "tools": {tool.name for tool in tools.tools},
            "search": found,
            "chunk": chunk,
            "answer": answer,
        }


def test_an_mcp_client_uses_the_tools_of_ragwright_serve_with_a_key(
    served: tuple[str, str],
) -> None:
    url, key = served
    result = anyio.run(use_mcp, f"{url}/mcp/", key)
    assert {"search", "ask", "get_chunk", "get_document", "list_sources"} <= result["tools"]
    search, chunk, answer = result["search"], result["chunk"], result["answer"]
    assert not (search.is_error or chunk.is_error or answer.is_error)
    hit = search.structured_content["hits"][0]
    assert hit["source"] == {"kind": "untrusted_document_text", "text": "docs/guide.md"}
    assert chunk.structured_content["chunk"]["text"] == hit["text"]
    assert "pip install ragwright" in answer.structured_content["answer"]["text"]
    # The MCP tools and the HTTP API answer from the same index.
    api = httpx.post(
        f"{url}/v1/search",
        json={"query": "install linux", "top_k": 3},
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    assert [h["chunk_id"] for h in api["hits"]] == [
        h["chunk_id"] for h in search.structured_content["hits"]
    ]


def test_the_mcp_endpoint_of_ragwright_serve_refuses_a_missing_or_unknown_key(
    served: tuple[str, str],
) -> None:
    url, _ = served
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    anonymous = httpx.post(f"{url}/mcp/", json=request, headers=accept)
    wrong = httpx.post(
        f"{url}/mcp/", json=request, headers=accept | {"Authorization": "Bearer rw_nope"}
    )
    assert (anonymous.status_code, wrong.status_code) == (401, 401)
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in its own errors
        anyio.run(use_mcp, f"{url}/mcp/", "rw_nope")
