"""`CallerGraphs`: the unrestricted caller walks the whole graph; a restricted caller walks its
own view, made once per graph version and principals, and a graph that cannot give a view
(one given to the index) is refused to it in graph mode and never routed to by auto."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright import Document, Index
from ragwright.errors import AccessDenied
from ragwright.filters import Filter
from ragwright.graph.search import GraphSearch
from ragwright.graph.snapshot import MemoryGraph, build_snapshot
from ragwright.models import Chunk
from ragwright.models.graph import ChunkFacts, GraphSnapshot, Mention
from ragwright.permissions import EVERYONE, Caller
from ragwright.pipeline.search.caller_graphs import CallerGraphs
from ragwright.testing import HashingEmbedder


def _facts(chunk_id: str, *keys: str) -> ChunkFacts:
    mentions = tuple(Mention(0, len(k), k, k.lower(), "NAME") for k in keys)
    return ChunkFacts(chunk_id, "test:1", mentions, ())


class CountingGraph(MemoryGraph):
    """A graph whose views a caller's permissions pick, counting the views made: chunk
    ``hidden`` is nobody's but ``group:hr``'s."""

    def __init__(self) -> None:
        super().__init__([_facts("open", "Kelp"), _facts("hidden", "Kelp", "Vault")])
        self.views = 0

    def readable_graph_snapshot(self, readable: Filter) -> GraphSnapshot:
        self.views += 1
        allowed = "group:hr" in getattr(readable, "principals", ())
        kept = [f for f in self._facts.values() if f.chunk_id != "hidden" or allowed]
        return build_snapshot(kept)


class NoChunks:
    def get_chunks(self, chunk_ids: object) -> dict[str, Chunk]:
        return {}

    def get_document(self, document_id: str) -> None:
        return None


def test_a_view_is_made_once_per_graph_version_and_caller() -> None:
    graph = CountingGraph()
    graphs = CallerGraphs(graph, GraphSearch())
    staff, hr = Caller.of("group:staff"), Caller.of("group:hr")
    assert graphs.retriever(EVERYONE, NoChunks()).check().entity_keys == ("kelp", "vault")
    assert graph.views == 0  # the whole graph: no view
    assert graphs.retriever(staff, NoChunks()).check().entity_keys == ("kelp",)
    assert graphs.retriever(staff, NoChunks()).check().chunk_ids == ("open",)
    assert graphs.has_chunks(staff) and graph.views == 1
    assert graphs.retriever(hr, NoChunks()).check().entity_keys == ("kelp", "vault")
    assert graph.views == 2
    graph.add([_facts("later", "Pier")])  # a new version: made again
    assert "pier" in graphs.retriever(staff, NoChunks()).check().entity_keys
    assert graph.views == 3


def test_a_graph_given_to_the_index_is_not_walked_for_a_restricted_caller(
    tmp_path: Path,
) -> None:
    given = MemoryGraph([_facts("x", "Kelp")])
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), graph=given) as kb:
        kb.ingestion.documents([Document.from_text("a.md", "Kelp grows fast in cold water.")])
        staff = Caller.of("group:staff")
        with pytest.raises(AccessDenied, match="cannot be limited"):
            kb.search("Kelp", mode="graph", caller=staff)
        question = "How is Kelp related to the water?"
        assert kb.searching.search_routed(question, mode="auto")[0].mode == "graph"
        route, hits = kb.searching.search_routed(question, mode="auto", caller=staff)
        assert (route.planned, route.mode) == ("graph", "hybrid") and hits
