"""The mode planner: the offline rules route by wording (aggregation → global, never for a
yes/no question; a statement → hybrid; comparison → the configured mode; bridge phrasing or
a named entity → graph); the dispatch turns a mode the index cannot run into hybrid and says
why; the LLM classifier behind the same port is tested against the loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.config import Config
from ragwright.errors import BudgetExceeded, ConfigError
from ragwright.llms.settings import Budget, LLMSettings
from ragwright.models import Route
from ragwright.planner import LLMPlanner, RulesPlanner, cues, dispatch, requested
from ragwright.planner.settings import PlannerSettings
from ragwright.ports import ModePlanner
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer

RULES = RulesPlanner()


@pytest.mark.parametrize(
    ("question", "mode", "cue"),
    [
        ("What are the main themes of the handbook?", "graph", "main themes"),
        ("Summarize what the documents say about backups.", "graph", "Summarize"),
        ("List all the limits Tidepool enforces.", "graph", "List all"),
        ("0-dimensional biomaterials lack inductive properties.", "hybrid", "statement"),
        ("Who is older, Annie Morton or Terry Richardson?", "hybrid", "comparison"),
        ("Are both Cynthia Mort and George Archainbaud American?", "hybrid", "comparison"),
        ("What position was held by the woman who portrayed Corliss Archer?", "graph", "who"),
        ("Where is the director of Big Stone Gap based?", "graph", "director of Big"),
        ("Tysons Galleria is located in what county?", "graph", "Tysons Galleria"),
        ("How much memory does a host need?", "hybrid", "a lookup"),
        # Comparisons: alternatives after a colon, names joined by "and" (two things, one
        # name match), a superlative before "or", a question ending in "Name or Name".
        ("Which novelist wrote as Walter Ericson: Laura Esquivel or Howard Fast?", "hybrid", ":"),
        ("Cistus and Stapelianthus are both forms of what?", "hybrid", "both"),
        ("Which writer has the highest rank Langston Hughes or Ian McEwan", "hybrid", "highest"),
        ("Who wrote Dune Frank Herbert or Isaac Asimov", "hybrid", "Herbert or Isaac Asimov"),
        # "and" inside one title with no comparison cue is still a bridge.
        ("Where is the director of Kiss and Tell based?", "graph", "director of Kiss"),
    ],
)
def test_rules_route_by_wording_and_say_which_cue(question: str, mode: str, cue: str) -> None:
    route = RULES.route(question)
    assert (route.mode, route.planned, route.planner) == (mode, mode, "rules")
    assert cue in route.reason


@pytest.mark.parametrize(
    "question",
    [
        "Where do I report a security vulnerability?",
        "By what time must I let my boss know I'm ill?",
        "Am I allowed paid days to help out a good cause?",
        "What's the daily food allowance on a business trip?",
        "Before switching to new vectors, how many passages are spot-checked?",
        "If I delete a file, does the index forget it?",
    ],
)
def test_a_first_person_lookup_names_nothing_and_goes_to_hybrid(question: str) -> None:
    """ "I", its contractions and a capitalized opener ("What's", "Before", "If", "Am") are
    no names: a user's own-words question about a policy is a lookup, not a graph search."""
    assert cues.names(question) == []
    route = RULES.route(question)
    assert route.mode == "hybrid"
    assert "a lookup" in route.reason


def test_a_name_beside_the_pronoun_or_opening_with_it_still_counts() -> None:
    assert cues.names("How do I serve Tidepool over HTTPS?") == ["Tidepool", "HTTPS"]
    assert cues.names("What's the name of the film starring Sarah Bolger?") == ["Sarah Bolger"]
    title = "I'd Come for You is a single by the band formed in what Alberta city?"
    assert cues.names(title) == ["I'd Come for You", "Alberta"]
    assert RULES.route("Who looks after the facilities in the Utrecht building?").mode == "graph"


def test_aggregation_goes_where_configured_and_a_yes_no_question_never_to_global() -> None:
    """Graph by default (it covered more of what aggregate answers need: see rules.py)."""
    question = "What are the main themes of the handbook?"
    assert "aggregate_mode graph" in RULES.route(question).reason
    to_global = RulesPlanner(aggregate_mode="global")
    assert to_global.route(question) == Route(
        "global", "aggregation cue 'main themes': a question about the corpus (aggregate_mode "
        "global, at most 1 chunk a document)", per_document=1
    )  # fmt: skip
    route = to_global.route("Do the main themes of the handbook include security?")
    assert route.mode != "global"
    assert "yes/no: never global" in route.reason
    with pytest.raises(ConfigError, match="aggregate_mode"):
        RulesPlanner(aggregate_mode="bm25")


def test_comparisons_go_where_configured() -> None:
    question = "Which band formed earlier, Goo Goo Dolls or Echosmith?"
    assert RulesPlanner(comparison_mode="graph").route(question).mode == "graph"
    assert RulesPlanner(comparison_mode="hybrid").route(question).mode == "hybrid"
    with pytest.raises(ConfigError, match="comparison_mode"):
        RulesPlanner(comparison_mode="global")


def test_dispatch_runs_what_the_index_can_and_says_why_it_fell_back() -> None:
    graph = Route("graph", "bridge phrasing 'the woman who portrayed'")
    no_graph = {"graph": "this index has no entity graph (graph build)"}
    assert dispatch(graph, lambda mode: None) == graph
    fallen = dispatch(graph, no_graph.get)
    assert (fallen.mode, fallen.planned) == ("hybrid", "graph")
    assert fallen.reason.startswith("bridge phrasing") and "no entity graph" in fallen.reason
    assert fallen.reason.endswith("(graph build), so hybrid")
    assert dispatch(Route("global", "x"), no_graph.get).mode == "global"
    assert requested("bm25") == Route("bm25", "mode bm25 was asked for", planner="request")


def test_the_modes_say_what_an_index_without_graph_or_reports_cannot_run(tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        route = kb.searching.plan("What are the main themes across all the documents?")
        assert (route.mode, route.planned) == ("hybrid", "graph")
        assert "no entity graph (graph build), so hybrid" in route.reason
    global_ = RulesPlanner(aggregate_mode="global")
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), planner=global_) as kb:
        route = kb.searching.plan("What are the main themes across all the documents?")
        assert (route.mode, route.planned) == ("hybrid", "global")
        assert "no global search (no community reports), so hybrid" in route.reason


def test_planner_settings_come_from_the_planner_table() -> None:
    config = Config({"planner": {"classifier": "llm", "comparison_mode": "graph"}})
    assert PlannerSettings.from_config(config) == PlannerSettings("llm", "graph")
    chosen = Config({"planner": {"aggregate_mode": "global"}})
    assert PlannerSettings.from_config(chosen).aggregate_mode == "global"
    with pytest.raises(ConfigError, match="aggregate_mode must be one of hybrid, graph, global"):
        PlannerSettings.from_config(Config({"planner": {"aggregate_mode": "bm25"}}))
    with pytest.raises(ConfigError, match="unknown setting classifer"):
        PlannerSettings.from_config(Config({"planner": {"classifer": "llm"}}))
    with pytest.raises(ConfigError, match="classifier must be one of rules, llm"):
        PlannerSettings.from_config(Config({"planner": {"classifier": "magic"}}))


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def llm_index(tmp_path: Path, server: OpenAIServer, **settings: object) -> Index:
    base = LLMSettings(model="router", base_url=server.url, retry_backoff=0.0)
    index = Index(
        tmp_path / "kb",
        embedder=HashingEmbedder(),
        llm_settings=base.with_overrides(**settings),
        config=Config({"planner": {"classifier": "llm"}}),
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text("Green tea is steamed soon after picking.\n", "utf-8")
    index.ingest([docs])
    return index


def test_the_llm_classifier_routes_through_the_index_and_its_ledger(
    tmp_path: Path, server: OpenAIServer
) -> None:
    server.script(json.dumps({"mode": "global", "reason": "It asks about every document."}))
    with llm_index(tmp_path, server) as index:
        route = index.searching.plan("Which teas appear in the documents?")
        assert (route.planned, route.planner) == ("global", "llm:router")
        assert route.mode == "hybrid"  # no global search in this index: the reason says so
        assert route.reason == (
            "It asks about every document.; this index has no global search "
            "(no community reports), so hybrid"
        )
        asked = server.requests[0]
        assert asked["response_format"] == {"type": "json_object"}
        fenced = "QUESTION\nWhich teas appear in the documents?\nQUESTION"
        assert asked["messages"][1] == {"role": "user", "content": fenced}
        assert [(row.model, row.calls) for row in index.llms.ledger()] == [("router", 1)]


def test_an_unusable_reply_or_global_for_yes_no_falls_back_to_the_rules(
    tmp_path: Path, server: OpenAIServer
) -> None:
    server.script(
        "not json",
        json.dumps({"mode": "teleport"}),
        json.dumps({"mode": "global", "reason": "all of them"}),
    )
    with llm_index(tmp_path, server) as index:
        planner = LLMPlanner(index.llms.llm)
        first = planner.route("How is green tea made?")
        assert first.mode == "hybrid" and first.reason.startswith("the model's reply named no")
        assert "(not JSON); rules: a lookup" in first.reason
        second = planner.route("Who is older, Annie Morton or Terry Richardson?")
        assert "mode 'teleport' is none of hybrid, graph, global" in second.reason
        third = planner.route("Are all the teas green?")
        assert third.mode == "hybrid"
        assert third.reason.startswith("the model chose global for a yes/no question")


def test_the_llm_classifier_draws_on_the_request_budget(
    tmp_path: Path, server: OpenAIServer
) -> None:
    route_reply = json.dumps({"mode": "hybrid", "reason": "a lookup"})
    server.script(route_reply, "Green tea is steamed soon after picking [1].")
    with llm_index(tmp_path, server, request_budget=Budget(max_calls=2)) as index:
        answer = index.ask("How is green tea made?", engine="stuff", mode="auto")
    assert answer.route == Route("hybrid", "a lookup", planner="llm:router")
    assert answer.usage.calls == 2  # the planner's call is the request's too
    server.script(route_reply)
    with (
        llm_index(tmp_path / "second", server, request_budget=Budget(max_calls=1)) as index,
        pytest.raises(BudgetExceeded, match="request budget of 1 LLM calls"),
    ):
        index.ask("How is green tea made?", engine="stuff", mode="auto")


def test_both_planners_implement_the_port(tmp_path: Path, server: OpenAIServer) -> None:
    with llm_index(tmp_path, server) as index:
        planners: list[ModePlanner] = [RULES, LLMPlanner(index.llms.llm)]
    assert [p.name for p in planners] == ["rules", "llm:router"]
    assert all(isinstance(p, ModePlanner) for p in planners)
