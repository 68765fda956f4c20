"""The per_document cap: at most N chunks of one document in a search's top k, the others
behind, picked from the uncapped search's own candidates; and the planner's aggregation
routes carrying it through search, search_routed and ask."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import httpx
import pytest

from cli_helpers import runner
from ragwright import Index
from ragwright.cli import app
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.models import Arm, Chunk, Hit, Route, Scale
from ragwright.pipeline.search.per_document import PerDocument, routed
from ragwright.pipeline.search.request import SearchRequest
from ragwright.planner import RulesPlanner, dispatch
from ragwright.planner.settings import PlannerSettings
from ragwright.testing import HashingEmbedder
from server_helpers import serve

AGGREGATE = "What are the main themes about kettles?"


def hit(chunk_id: str, document_id: str) -> Hit:
    chunk = Chunk(chunk_id, document_id, 0, "text", 0, 4, MappingProxyType({}))
    return Hit(chunk, 1.0, Scale.FUSED, frozenset({Arm.VECTOR}))


def test_extra_chunks_of_a_document_go_behind_the_others_in_their_order() -> None:
    hits = [hit("a1", "a"), hit("a2", "a"), hit("b1", "b"), hit("a3", "a"), hit("c1", "c")]
    ranked = [h.chunk.id for h in PerDocument(1, 10).process("q", hits)]
    assert ranked == ["a1", "b1", "c1", "a2", "a3"]  # nothing dropped: a backfills
    assert [h.chunk.id for h in PerDocument(2, 4).process("q", hits)] == ["a1", "a2", "b1", "c1"]
    assert [h.chunk.id for h in PerDocument(1, 2).process("q", hits)] == ["a1", "b1"]
    with pytest.raises(ConfigError, match="at least 1"):
        PerDocument(0, 5)


def test_the_setting_is_validated_where_the_request_is_made() -> None:
    assert SearchRequest().per_document == 0
    assert SearchRequest.from_mapping({"per_document": 2}).settings()["per_document"] == 2
    for bad in (-1, 1.5, True):
        with pytest.raises(ConfigError, match="per_document must be an integer"):
            SearchRequest(per_document=bad)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """kettles.md has four sections on kettles (four chunks); three other documents have one
    kettle sentence each, among other things."""
    docs = tmp_path_factory.mktemp("docs")
    sections = [
        f"# Kettle part {n}\n\nKettles boil water; kettle {n} has a kettle lid and kettle "
        f"spout.\n" + "Filler words about the kettle here. " * 40
        for n in range(4)
    ]
    (docs / "kettles.md").write_text("\n\n".join(sections), "utf-8")
    for name in ("tea", "office", "travel"):
        (docs / f"{name}.md").write_text(
            f"# {name}\n\nThe {name} room has a kettle. It also has chairs and a window.\n",
            "utf-8",
        )
    with Index(tmp_path_factory.mktemp("kb"), embedder=HashingEmbedder()) as built:
        built.ingest([docs])
        yield built


def test_the_search_command_takes_the_cap(index: Index) -> None:
    where = ["--index", str(index.location), "--embedder", "hashing"]
    flags = ["--mode", "hybrid", "-k", "4", "--per-document", "1", "--json"]
    shown = runner.invoke(app, ["search", "kettle lid spout", *where, *flags])
    assert shown.exit_code == 0, shown.output
    hits = json.loads(shown.stdout)["hits"]
    assert len({hit["source"] for hit in hits}) == 4
    refused = runner.invoke(app, ["search", "kettle", "--per-document", "-1"])
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_the_http_search_takes_the_cap(index: Index) -> None:
    body = {"query": "kettle lid spout", "mode": "hybrid", "top_k": 4, "per_document": 1}
    with serve(index) as url:
        found = httpx.post(f"{url}/v1/search", json=body, timeout=30)
        refused = httpx.post(f"{url}/v1/search", json={**body, "per_document": -1}, timeout=30)
    assert found.status_code == 200, found.text
    assert len({hit["source"] for hit in found.json()["hits"]}) == 4
    assert refused.status_code == 422 and "Traceback" not in refused.text


def sources(hits: list[Hit]) -> list[str]:
    return [Path(h.source).name for h in hits]


def test_a_capped_search_reranks_the_uncapped_candidates_for_coverage(index: Index) -> None:
    plain = index.search("kettle lid spout", mode="hybrid", top_k=4)
    assert Counter(sources(plain))["kettles.md"] >= 3  # one document crowds the top 4
    capped = index.search("kettle lid spout", mode="hybrid", top_k=4, per_document=1)
    assert len(capped) == 4 and len(set(sources(capped))) == 4
    assert capped[0].chunk.id == plain[0].chunk.id  # the best hit keeps its place
    assert [h.rank for h in capped] == [1, 2, 3, 4]
    # Every capped hit is one of the uncapped search's candidates (its depth, 20).
    candidates = index.search("kettle lid spout", mode="hybrid", top_k=20, arm_depth=20)
    assert {h.chunk.id for h in capped} <= {h.chunk.id for h in candidates}
    # With fewer documents than top_k, a document's further chunks fill the rest.
    filled = index.search("kettle lid spout", mode="hybrid", top_k=6, per_document=1)
    assert len(filled) == 6 and sources(filled)[4:] == ["kettles.md", "kettles.md"]


def test_the_aggregation_route_caps_and_every_way_of_asking_runs_it(index: Index) -> None:
    route = RulesPlanner().route(AGGREGATE)
    assert route.per_document == 1 and "at most 1 chunk a document" in route.reason
    assert RulesPlanner(aggregate_per_document=0).route(AGGREGATE).per_document == 0
    assert RulesPlanner().route("How do kettles boil water?").per_document == 0
    # The cap survives the dispatch's fallback to hybrid (no entity graph here).
    fallen = dispatch(route, lambda mode: "this index has no entity graph")
    assert (fallen.mode, fallen.per_document) == ("hybrid", 1)
    assert routed(SearchRequest(), fallen) == SearchRequest(mode="hybrid", per_document=1)
    assert routed(SearchRequest(per_document=3), Route("graph", "x")).per_document == 3

    capped = index.search(AGGREGATE, mode="hybrid", top_k=4, per_document=1)
    assert index.search(AGGREGATE, mode="auto", top_k=4) == capped
    taken, hits = index.searching.search_routed(AGGREGATE, SearchRequest(mode="auto", top_k=4))
    assert taken.per_document == 1 and hits == capped
    answer = index.ask(AGGREGATE, top_k=4, mode="auto")
    assert answer.route is not None and answer.route.per_document == 1
    cited = {Path(c.source).name for c in answer.citations}
    assert cited <= set(sources(capped))


def test_the_planner_table_sets_the_cap(tmp_path: Path) -> None:
    assert PlannerSettings().aggregate_per_document == 1
    chosen = Config({"planner": {"aggregate_per_document": 0}})
    assert PlannerSettings.from_config(chosen).aggregate_per_document == 0
    with pytest.raises(ConfigError, match="aggregate_per_document must be an integer >= 0"):
        PlannerSettings.from_config(Config({"planner": {"aggregate_per_document": -2}}))
    with pytest.raises(ConfigError, match="aggregate_per_document"):
        RulesPlanner(aggregate_per_document=-1)
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=chosen) as plain:
        assert plain.searching.plan(AGGREGATE).per_document == 0
