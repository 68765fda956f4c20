"""Document permissions on every surface: the CLI's ``--as``, HTTP keys bound to principals
(one index and a federation), and MCP servers bound to a caller (in process and ``ragwright mcp
--principal`` on stdio). Whatever a caller may not read is never returned, counted or quoted."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from cli_helpers import runner
from ragwright import Federation, Index
from ragwright.cli import app as cli
from ragwright.config import Config, load_config
from ragwright.mcp_server import build_federation_server, build_server
from ragwright.permissions import Caller
from ragwright.server import ServerSettings, create_federation_app
from ragwright.server.runner import running, server_for
from ragwright.testing import HashingEmbedder
from server_helpers import serve

SECRET = "The vault code is 4711."
RULES = {"permissions": [{"path": "vault/**", "principals": ["group:vault"]}]}


def write_docs(folder: Path, where: str = "cellar") -> Path:
    (folder / "vault").mkdir(parents=True)
    (folder / "open.md").write_text(f"The vault is in the {where}. Ask the porter.\n")
    (folder / "vault" / "code.md").write_text(f"{SECRET} The vault in the {where} opens at 9.\n")
    return folder


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("perms")
    docs = write_docs(root / "docs")
    with Index(root / "kb", embedder=HashingEmbedder(), config=Config(RULES)) as kb:
        kb.ingestion.name_sources_from(docs)
        assert kb.ingest(docs).ok
    return root / "kb"


def unreadable(text: str) -> bool:
    return "4711" not in text and "vault/code.md" not in text


# -- CLI --------------------------------------------------------------------------------------


def test_cli_search_and_ask_as_a_principal(index_dir: Path) -> None:
    base = ["--index", str(index_dir)]
    everything = runner.invoke(cli, ["search", "vault code", *base, "--json"])
    assert everything.exit_code == 0, everything.output
    assert "vault/code.md" in everything.output
    outsider = runner.invoke(cli, ["search", "vault code", *base, "--json", "--as", "group:x"])
    assert outsider.exit_code == 0, outsider.output
    assert [h["source"] for h in json.loads(outsider.output)["hits"]] == ["open.md"]
    insider = runner.invoke(cli, ["search", "vault code", *base, "--json", "--as", "group:vault"])
    assert "vault/code.md" in insider.output
    asked = runner.invoke(cli, ["ask", "What is the vault code?", *base, "--as", "group:x"])
    assert asked.exit_code == 0, asked.output
    assert unreadable(asked.output)
    refused = runner.invoke(cli, ["search", "vault", *base, "--mode", "global", "--as", "g:x"])
    assert refused.exit_code == 2 and "principals" in refused.output
    listed = runner.invoke(cli, ["docs", "list", *base, "--json", "--as", "group:x"])
    assert [d["source"] for d in json.loads(listed.output)] == ["open.md"]
    shown = runner.invoke(cli, ["docs", "show", "vault/code.md", *base, "--as", "group:x"])
    assert shown.exit_code == 2 and unreadable(shown.output.replace("'vault/code.md'", ""))
    counted = runner.invoke(cli, ["stats", *base, "--json", "--as", "group:x"])
    assert json.loads(counted.output)["documents"] == 1
    # The size, the LLM ledger and the response cache count every document: not told.
    told = {k: json.loads(counted.output)[k] for k in ("database_bytes", "llm_ledger", "llm_cache")}
    assert told == {"database_bytes": None, "llm_ledger": None, "llm_cache": None}
    assert runner.invoke(cli, ["stats", *base, "--as", "group:x"]).exit_code == 0


def test_keys_add_binds_a_key_to_principals(tmp_path: Path) -> None:
    config = tmp_path / "ragwright.toml"
    added = runner.invoke(
        cli, ["keys", "add", "hr-bot", "--principal", "group:hr", "--config", str(config)]
    )
    assert added.exit_code == 0, added.output
    (key,) = ServerSettings.from_config(load_config(config)).keys
    assert key.principals == ("group:hr",) and key.caller == Caller.of("group:hr")
    listed = runner.invoke(cli, ["keys", "list", "--config", str(config)])
    assert "group:hr" in listed.output
    bad = runner.invoke(cli, ["keys", "add", "x", "--principal", " ", "--config", str(config)])
    assert bad.exit_code != 0 and "principal" in bad.output


# -- HTTP -------------------------------------------------------------------------------------


def _settings(tmp_path: Path) -> tuple[ServerSettings, dict[str, str]]:
    config = tmp_path / "ragwright.toml"
    secrets = {}
    for name, bound in (("admin", []), ("outsider", ["group:x"]), ("insider", ["group:vault"])):
        flags = [arg for p in bound for arg in ("--principal", p)]
        added = runner.invoke(cli, ["keys", "add", name, *flags, "--config", str(config)])
        assert added.exit_code == 0, added.output
        secrets[name] = added.stdout.strip().splitlines()[-1]
    return ServerSettings.from_config(load_config(config)), secrets


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def api(tmp_path: Path, index_dir: Path) -> Iterator[tuple[str, dict[str, str], Index]]:
    settings, secrets = _settings(tmp_path)

    async def hello(_: object) -> PlainTextResponse:
        return PlainTextResponse("mounted")

    mounted = {"/mcp": Starlette(routes=[Route("/", hello)])}  # where serve mounts MCP's app
    with Index(index_dir) as kb, serve(kb, settings, mounts=mounted) as url:
        yield url, secrets, kb


def test_http_a_bound_key_reads_only_its_documents_everywhere(
    api: tuple[str, dict[str, str], Index],
) -> None:
    url, secrets, kb = api
    secret = kb.documents.get("vault/code.md")
    assert secret is not None
    chunk_id = kb.documents.chunks_of(secret.id)[0].id
    outsider, admin = _bearer(secrets["outsider"]), _bearer(secrets["admin"])
    for mode in ("bm25", "vector", "hybrid"):
        body = {"query": "vault code", "mode": mode}
        found = httpx.post(f"{url}/v1/search", json=body, headers=outsider)
        assert found.status_code == 200, found.text
        assert [h["source"] for h in found.json()["hits"]] == ["open.md"]
        everything = httpx.post(f"{url}/v1/search", json=body, headers=admin).json()
        assert "vault/code.md" in {h["source"] for h in everything["hits"]}
    asked = httpx.post(
        f"{url}/v1/ask", json={"question": "What is the vault code?"}, headers=outsider
    )
    assert asked.status_code == 200 and unreadable(asked.text)
    listed = httpx.get(f"{url}/v1/documents", headers=outsider).json()
    assert [d["source"] for d in listed["documents"]] == ["open.md"]
    for path in (f"/v1/documents/{secret.source}", f"/v1/documents/{secret.id}"):
        assert httpx.get(f"{url}{path}", headers=outsider).status_code == 404
    assert httpx.get(f"{url}/v1/chunks/{chunk_id}", headers=outsider).status_code == 404
    assert httpx.get(f"{url}/v1/chunks/{chunk_id}", headers=admin).status_code == 200
    insider = _bearer(secrets["insider"])
    assert httpx.get(f"{url}/v1/chunks/{chunk_id}", headers=insider).status_code == 200
    stats = httpx.get(f"{url}/v1/stats", headers=outsider).json()
    assert (stats["documents"], stats["chunks"]) == (
        1,
        len(kb.documents.chunks_of(kb.documents.list()[0].id)),
    )
    assert (stats["database_bytes"], stats["llm_ledger"], stats["llm_cache"]) == (None, None, None)
    everything = httpx.get(f"{url}/v1/stats", headers=admin).json()
    assert everything["documents"] == 2 and everything["database_bytes"] > 0
    assert everything["llm_ledger"] == [] and everything["llm_cache"]["entries"] == 0


def test_http_views_built_from_every_document_are_403_for_a_bound_key(
    api: tuple[str, dict[str, str], Index],
) -> None:
    url, secrets, _ = api
    outsider = _bearer(secrets["outsider"])
    for path in ("/v1/graph/stats", "/v1/sync", "/v1/graph/entities?q=vault"):
        response = httpx.get(f"{url}{path}", headers=outsider)
        assert response.status_code == 403, (path, response.text)
        assert response.json()["error"]["code"] == "access_denied"
    body = {"query": "vault", "mode": "global"}
    refused = httpx.post(f"{url}/v1/search", json=body, headers=outsider)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "access_denied"


def test_http_a_federation_applies_the_keys_principals_in_every_member(
    tmp_path: Path, index_dir: Path
) -> None:
    settings, secrets = _settings(tmp_path)
    other = tmp_path / "other"
    docs = write_docs(tmp_path / "docs2", "attic")
    with Index(other, embedder=HashingEmbedder(), config=Config(RULES)) as kb:
        kb.ingestion.name_sources_from(docs)
        kb.ingest(docs)
    with Federation.open([f"one={index_dir}", f"two={other}"]) as federation:
        application = create_federation_app(federation, settings, host="127.0.0.1")
        server = server_for(application, "127.0.0.1", 0, settings, log_level="warning")
        with running(server) as url:
            body = {"query": "vault code", "top_k": 10}
            outsider = httpx.post(
                f"{url}/v1/search", json=body, headers=_bearer(secrets["outsider"])
            ).json()
            admin = httpx.post(f"{url}/v1/search", json=body, headers=_bearer(secrets["admin"]))
            listed = httpx.get(f"{url}/v1/documents", headers=_bearer(secrets["outsider"]))
    assert {(h["index"], h["source"]) for h in outsider["hits"]} == {
        ("one", "open.md"),
        ("two", "open.md"),
    }
    assert sum(h["source"] == "vault/code.md" for h in admin.json()["hits"]) == 2
    assert {d["source"] for d in listed.json()["documents"]} == {"open.md"}


# -- MCP --------------------------------------------------------------------------------------


def _tool(server: Any, tool: str, arguments: dict[str, Any]) -> Any:
    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_mcp_a_server_bound_to_a_caller_reads_only_its_documents(index_dir: Path) -> None:
    with Index(index_dir) as kb:
        bound = build_server(kb, caller=Caller.of("group:x"))
        found = _tool(bound, "search", {"query": "vault code"})
        assert unreadable(json.dumps(found.structured_content))
        assert "open.md" in json.dumps(found.structured_content)
        listed = _tool(bound, "list_sources", {})
        assert listed.structured_content["total"] == 1
        assert _tool(bound, "get_document", {"document": "vault/code.md"}).is_error
        asked = _tool(bound, "ask", {"question": "What is the vault code?"})
        assert unreadable(json.dumps(asked.structured_content))
        graph = _tool(bound, "graph_stats", {})
        assert graph.is_error and "principals" in graph.content[0].text
        free = build_server(kb)
        assert not _tool(free, "get_document", {"document": "vault/code.md"}).is_error


def test_mcp_a_federation_server_bound_to_a_caller(index_dir: Path) -> None:
    with Federation.open([f"one={index_dir}"]) as federation:
        bound = build_federation_server(federation, caller=Caller.of("group:x"))
        found = _tool(bound, "search", {"query": "vault code"})
        assert unreadable(json.dumps(found.structured_content))
        assert _tool(bound, "get_document", {"document": "vault/code.md"}).is_error


def test_mcp_stdio_with_a_principal(index_dir: Path) -> None:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragwright", "mcp", "--index", str(index_dir), "--principal", "group:x"],
    )

    async def main() -> tuple[Any, Any]:
        async with Client(parameters) as client:
            found = await client.call_tool("search", {"query": "vault code"})
            listed = await client.call_tool("list_sources", {})
            return found, listed

    found, listed = anyio.run(main)
    assert unreadable(json.dumps(found.structured_content))
    assert listed.structured_content["total"] == 1


def test_the_mounted_mcp_endpoint_refuses_a_bound_key(
    api: tuple[str, dict[str, str], Index],
) -> None:
    url, secrets, _ = api
    response = httpx.get(f"{url}/mcp/", headers=_bearer(secrets["outsider"]))
    assert response.status_code == 403
    assert "ragwright mcp --principal" in response.json()["error"]["message"]
    assert httpx.get(f"{url}/mcp/", headers=_bearer(secrets["admin"])).text == "mounted"
