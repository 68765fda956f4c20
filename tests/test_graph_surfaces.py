"""The entity graph through its surfaces: the CLI (`graph …`, `ingest --graph`), HTTP and MCP
give the same entities and spans, refuse bad input with typed errors, and mark author text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.errors import MissingDependencyError, RegistryError
from ragwright.graph.registry import create_extractor
from ragwright.mcp_server import build_server
from ragwright.mcp_server.results import UNTRUSTED_NOTICE
from ragwright.models.communities import CommunitySettings
from ragwright.testing import HashingEmbedder
from server_helpers import serve

DOCS = {
    "summit.md": "Barack Obama met Angela Merkel in Berlin.\n\nObama flew home from Berlin.\n",
    "lab.md": "IBM opened a lab in Zurich. The I.B.M. team grew.\n",
}


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWRIGHT_CONFIG", raising=False)
    monkeypatch.setenv("RAGWRIGHT_INDEX", str(tmp_path / "kb"))
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    return docs


def cli(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    return result


def test_ingest_with_the_graph_then_stats_entity_merge_and_unmerge(corpus: Path) -> None:
    ingested = cli("ingest", "docs", "--embedder", "hashing", "--graph", "--extractor",
                   "capitalized", "--json")  # fmt: skip
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)["chunks_extracted"] == 2
    stats = json.loads(cli("graph", "stats", "--json").stdout)
    assert stats["extracted_by"] == {"capitalized:1": 2} and stats["synonym_links"] == 2
    entity = json.loads(cli("graph", "entity", "Berlin", "--json").stdout)
    content = (corpus / "summit.md").read_text("utf-8")
    assert [content[s["document_start"] : s["document_end"]] for s in entity["sites"]] == [
        "Berlin", "Berlin"
    ]  # fmt: skip
    assert {n["name"] for n in entity["neighbours"]} == {"Barack Obama", "Angela Merkel", "Obama"}
    # a second build finds nothing to do; the extractor recorded by ingest is the default
    again = json.loads(cli("graph", "build", "--json").stdout)
    assert again["chunks_extracted"] == 0 and again["extractor"] == "capitalized:1"
    assert again["fact_vectors"] == 0  # the ingest embedded every typed fact already
    assert cli("graph", "merge", "Obama", "Barack Obama").exit_code == 0
    assert json.loads(cli("graph", "stats", "--json").stdout)["merges"] == 1
    undone = cli("graph", "unmerge", "Obama", "Barack Obama")
    assert undone.exit_code == 0 and "separated" in undone.stdout
    missing = cli("graph", "entity", "Atlantis")
    assert missing.exit_code == 1 and "no entity" in missing.output
    refused = cli("graph", "merge", "Obama", "Atlantis")
    assert refused.exit_code == 2 and "no entity 'Atlantis'" in refused.output


def test_graph_build_after_a_plain_ingest_and_its_errors(corpus: Path) -> None:
    assert cli("ingest", "docs", "--embedder", "hashing").exit_code == 0
    built = json.loads(cli("graph", "build", "--extractor", "capitalized", "--json").stdout)
    assert built["chunks_extracted"] == 2 and built["graph"]["entities"] == 7
    assert built["llm_calls"] is None  # this extractor reports no LLM use
    unknown = cli("graph", "build", "--extractor", "nonesuch")
    assert unknown.exit_code == 2 and "unknown extractor 'nonesuch'" in unknown.output
    lonely = cli("ingest", "docs", "--extractor", "capitalized")
    assert lonely.exit_code == 2 and "--graph" in lonely.output


def test_an_extractor_whose_extra_is_missing_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entry point whose module cannot import (its extra is not installed)."""
    from importlib.metadata import EntryPoint

    import ragwright.graph.registry as registry

    broken = EntryPoint("spacy", "ragwright_no_such_module:Extractor", registry.GROUP)
    monkeypatch.setattr(registry, "_registry", lambda: {"spacy": broken})
    with pytest.raises(MissingDependencyError) as caught:
        create_extractor("spacy")
    assert caught.value.install == "pip install 'ragwright[graph]'"
    with pytest.raises(RegistryError):
        create_extractor("rules:extra")


@pytest.fixture
def graph_index(tmp_path: Path) -> Iterator[Index]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest(docs, base=tmp_path, extractor="capitalized")
        yield kb


def test_http_graph_routes(graph_index: Index) -> None:
    with serve(graph_index) as url, httpx.Client(base_url=url, timeout=30) as client:
        stats = client.get("/v1/graph/stats").json()
        entity = client.get("/v1/graph/entities/Berlin", params={"max_sites": 1})
        missing = client.get("/v1/graph/entities/Atlantis")
        built = client.post("/v1/graph/build", json={})
        stray = client.post("/v1/graph/build", json={"extractor": "capitalized", "x": 1})
        unknown = client.post("/v1/graph/build", json={"extractor": "nonesuch"})
        merged = client.post("/v1/graph/merge", json={"first": "IBM", "second": "I.B.M."})
        bad_merge = client.post("/v1/graph/merge", json={"first": "IBM", "second": "Atlantis"})
        scoped = client.get("/v1/collections/default/graph/stats")
        after = client.get("/v1/graph/stats").json()
    assert stats["entities"] == 7 and stats["chunks_extracted"] == 2
    body = entity.json()
    assert entity.status_code == 200 and body["content_trust"] == "untrusted"
    assert len(body["sites"]) == 1 and body["sites"][0]["text"] == "Berlin"
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "unknown_entity")
    assert built.status_code == 200 and built.json()["chunks_extracted"] == 0
    assert stray.status_code == 422
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (400, "invalid_argument")
    assert merged.status_code == 200 and after["merges"] == 1
    assert (bad_merge.status_code, bad_merge.json()["error"]["code"]) == (404, "unknown_entity")
    assert scoped.status_code == 200 and scoped.json()["entities"] == 7


def test_mcp_graph_tools_mark_author_text_untrusted(graph_index: Index) -> None:
    async def main() -> tuple[Any, Any, Any]:
        async with Client(build_server(graph_index)) as client:
            stats = await client.call_tool("graph_stats", {})
            entity = await client.call_tool("graph_entity", {"name": "Obama"})
            missing = await client.call_tool("graph_entity", {"name": "Atlantis"})
            return stats, entity, missing

    stats, entity, missing = anyio.run(main)
    assert stats.structured_content["entities"] == 7
    found = entity.structured_content
    assert found["notice"] == UNTRUSTED_NOTICE
    assert found["name"] == {"kind": "untrusted_document_text", "text": "Obama"}
    assert found["synonyms"][0]["name"]["text"] == "Barack Obama"
    site = found["sites"][0]
    assert site["text"]["kind"] == "untrusted_document_text"
    assert site["source"]["text"].endswith("summit.md")
    assert missing.is_error and "no entity 'Atlantis'" in missing.content[0].text


def test_mcp_community_tools_cite_exact_spans_and_say_what_is_missing(
    graph_index: Index,
) -> None:
    async def calls(*requests: tuple[str, dict[str, Any]]) -> list[Any]:
        async with Client(build_server(graph_index)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in requests]

    (before,) = anyio.run(calls, ("graph_communities", {}))
    assert before.is_error and "no communities" in before.content[0].text
    graph_index.communities.build(CommunitySettings(min_mentions=1))
    listed, level0, missing, bad = anyio.run(
        calls,
        ("graph_communities", {}),
        ("graph_communities", {"level": 0}),
        ("graph_community", {"community_id": 999}),
        ("graph_community", {"community_id": -1}),
    )
    found = listed.structured_content
    assert found["notice"] == UNTRUSTED_NOTICE and found["levels"][0]["disconnected"] == 0
    lab = next(
        c for c in found["communities"] if {"ibm", "zurich"} <= {m["text"] for m in c["members"]}
    )
    assert lab["title"]["kind"] == "untrusted_document_text" and lab["title"]["text"]
    assert {c["level"] for c in level0.structured_content["communities"]} == {0}
    (one,) = anyio.run(calls, ("graph_community", {"community_id": lab["id"]}))
    report = one.structured_content
    assert report["community"]["id"] == lab["id"] and report["citations"]
    for citation in report["citations"]:
        document = graph_index.documents.get(citation["document_id"])
        assert document is not None and citation["source"]["text"].endswith("lab.md")
        span = document.content[citation["char_start"] : citation["char_end"]]
        assert span == citation["quote"]["text"]
    assert missing.is_error and "no community 999" in missing.content[0].text
    assert bad.is_error
