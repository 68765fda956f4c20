"""Graph mode's gate: which passages are bridges (region-qualified titles, titles the question
names), the passage about a second name moved up when the gate is closed, and no walk when
nothing can be bridged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.graph.bridges import bridge_positions, names_both, second_named
from ragwright.graph.extractors.rules import RuleExtractor
from ragwright.graph.search import GraphSearch
from ragwright.graph.settings import GraphSettings
from ragwright.graph.snapshot import MemoryGraph
from ragwright.models import Arm, Chunk, Document, Hit
from ragwright.pipeline.search.request import SearchOptions, SearchRequest
from ragwright.testing import HashingEmbedder

COMPARISON = "Who is older, Annie Morton or Terry Richardson?"
TEXTS = {
    "morton.txt": "Annie Morton\n\nAnnie Morton is a model. Who is older than Annie Morton?",
    "kenton.txt": "Kenton Richardson\n\nWho is older, Kenton or Terry? Morton or Richardson?",
    "terry.txt": "Terry Richardson\n\nA photographer from New York, born in 1965.",
    "quill.txt": "Ada Quill\n\nAda Quill was born in Brennick.",
}
MIN_MAX: SearchOptions = {"fusion": "convex", "document_share": 0.0, "top_k": 3}


def test_a_place_titled_with_its_region_is_a_bridge_where_the_hop_names_the_region() -> None:
    """ "Sullivan County, New Hampshire" is about "sullivan county" for a hop passage that
    names New Hampshire; "Marion, Arkansas" is not the Marion of a passage about Australia."""
    keys = {"sullivan county", "marion"}
    titles = ["marion, arkansas", "sullivan county, new hampshire", "sullivan county, kansas"]
    hop = "East Lempster is in Sullivan County, New Hampshire. Marion, South Australia."
    assert bridge_positions(keys, titles, [True, True, True], hop_text=hop) == [1]
    assert bridge_positions(keys, titles, [True, True, True]) == []  # no hop text: no region
    assert bridge_positions({"sullivan county, kansas"}, titles, [True, True, True]) == [2]


def test_a_title_the_question_names_is_no_bridge() -> None:
    """Query linking took "Kiss and Tell", so the first hop's "Kiss" looked unnamed; the
    title's words in the question's say otherwise, and the next candidate is the bridge."""
    query = "What position was held by the woman who portrayed Corliss Archer in Kiss and Tell?"
    keys = {"kiss", "shirley temple"}
    assert bridge_positions(keys, ["kiss", "shirley temple"], [True, True], query=query) == [1]
    assert bridge_positions(keys, ["kiss", "shirley temple"], [True, True]) == [0, 1]


def test_the_passage_about_a_second_name_the_question_uses_goes_to_rank_2() -> None:
    assert second_named(["annie morton", "kenton richardson", "terry richardson"], COMPARISON) == 2
    # The second hit already is about the other name: nothing to move.
    assert second_named(["annie morton", "terry richardson", "x"], COMPARISON) is None
    # Named first hop ranked third behind two passages about nothing the question names.
    kaiser = "Kaiser Ventures corporation was founded by which industrialist?"
    assert second_named(["henry j. kaiser", "kaiser shipyards", "kaiser ventures"], kaiser) == 2
    # A title inside the first one's name is no second name; nor is a non-first chunk ("").
    lake = "Brown State Fishing Lake is in a country of how many inhabitants?"
    assert second_named(["brown state fishing lake", "neosho", "fishing lake"], lake) is None
    assert second_named(["annie morton", "kenton richardson", ""], COMPARISON) is None
    assert second_named(["annie morton", "kenton richardson"], COMPARISON) is None
    # The comparison check needs two names apart in the question.
    boots = "Who was the writer of These Boots Are Made for Walkin' and who died in 2007?"
    assert not names_both(["these boots are made for walkin", "boots"], boots)
    assert names_both(["annie morton", "terry richardson"], COMPARISON)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    location = tmp_path_factory.mktemp("bridges") / "kb"
    documents = [Document.from_text(source, text) for source, text in TEXTS.items()]
    with Index(location, embedder=HashingEmbedder()) as index:
        assert index.ingestion.documents(documents).ok
    return location


@pytest.fixture
def kb(folder: Path) -> Iterator[Index]:
    with Index(folder, embedder=HashingEmbedder()) as plain:
        chunks: list[Chunk] = []
        while page := plain.documents.export.chunk_page(chunks[-1].id if chunks else None, 100):
            chunks += page
    graph = MemoryGraph(RuleExtractor().extract(chunks))
    with Index(folder, embedder=HashingEmbedder(), graph=graph) as index:
        yield index


def sources(hits: list[Hit]) -> list[str]:
    return [hit.source for hit in hits]


def test_a_closed_gate_moves_the_second_named_passage_up_without_walking(
    kb: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hybrid ranks Kenton Richardson second, and the walk finds no passage to bridge to, so
    the gate stays closed; Terry Richardson's passage moves up to rank 2."""
    hybrid = sources(kb.search(COMPARISON, **MIN_MAX))
    assert hybrid == ["morton.txt", "kenton.txt", "terry.txt"]
    walks: list[str] = []
    real_rank = GraphSearch.rank
    monkeypatch.setattr(
        GraphSearch, "rank", lambda self, query, *a, **k: walks.append(query) or real_rank(
            self, query, *a, **k
        ),
    )  # fmt: skip
    graph = kb.search(COMPARISON, mode="graph", **MIN_MAX)
    assert sources(graph) == ["morton.txt", "terry.txt", "kenton.txt"]
    assert [hit.rank for hit in graph] == [1, 2, 3]
    assert not any(Arm.GRAPH in hit.arms for hit in graph)
    off = kb.search(COMPARISON, mode="graph", graph=GraphSettings(named_window=0), **MIN_MAX)
    assert sources(off) == hybrid
    # First two hits about two names the question uses: a comparison, and no walk at all.
    walks.clear()
    both = "Is Ada Quill older than Annie Morton?"
    assert sources(kb.search(both, mode="graph", **MIN_MAX))[:2] == ["quill.txt", "morton.txt"]
    assert walks == []
    # Ungated, the walk runs (and ranks every query), as before the gate.
    kb.search(both, mode="graph", graph=GraphSettings(bridge_hits=0), **MIN_MAX)
    assert walks == [both]
    request = SearchRequest.from_mapping({"mode": "graph", "graph_named_window": 3})
    assert request.graph.named_window == 3 and request.settings()["graph_named_window"] == 3
    assert SearchRequest.from_mapping({"mode": "graph"}).graph.keep_top == 1
