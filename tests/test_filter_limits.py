"""Filters past the limits on depth, conditions and values: a `FilterSyntaxError` pointing at
where the limit was crossed, on every surface; filters at the limits run on the real store."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cli_helpers import ingest_sample_docs, runner
from ragwright import Index
from ragwright.cli import app
from ragwright.errors import FilterSyntaxError, UnsupportedFilter
from ragwright.filters import (
    MAX_DEPTH,
    MAX_TERMS,
    MAX_VALUES,
    Comparison,
    Filter,
    In,
    Not,
    Or,
    parse_filter,
)
from ragwright.pipeline.search.retrieval import SearchMode
from server_helpers import build_index, serve

#: Graph mode runs hybrid search with the same filter first (test_graph_search covers it);
#: this index has no graph (nor sparse term weights: test_sparse_arm filters that arm).
UNBUILT = (SearchMode.GRAPH, SearchMode.GLOBAL, SearchMode.SPARSE)
PLAIN_MODES = [m for m in SearchMode if m not in UNBUILT]

# The audit's reproductions: Python's recursion limit and SQLite's parser stack and expression
# depth, each reached by a filter shorter than the surfaces' 4,096-character limit.
DEEP_PARENTHESES = "(" * 329 + "a = 1" + ")" * 329
REPEATED_NOT = "not " * 41 + "a = 1"
MANY_TERMS = " or ".join(["a=1"] * 495)
LONG_IN_LIST = "a in (" + ", ".join(str(i) for i in range(MAX_VALUES + 1)) + ")"
HOSTILE = [DEEP_PARENTHESES, REPEATED_NOT, MANY_TERMS]
assert all(len(expression) <= 4096 for expression in HOSTILE)


def alternating(depth: int) -> str:
    """``a = 0 or (a = 1 and (a = 2 or (…)))``: the shape that costs SQLite's parser most."""
    text = "a = 0"
    for level in range(depth):
        text = f"a = {level + 1} {'and' if level % 2 else 'or'} ({text})"
    return text


@pytest.mark.parametrize(
    ("expression", "reason", "position"),
    [
        (DEEP_PARENTHESES, f"nested more than {MAX_DEPTH} deep", MAX_DEPTH),
        (REPEATED_NOT, f"nested more than {MAX_DEPTH} deep", 4 * MAX_DEPTH),
        (MANY_TERMS, f"more than {MAX_TERMS} conditions", len("a=1 or ") * MAX_TERMS),
        (LONG_IN_LIST, f"more than {MAX_VALUES} values", LONG_IN_LIST.index(f" {MAX_VALUES})") + 1),
    ],
)
def test_a_filter_past_a_limit_is_a_syntax_error_at_the_crossing(
    expression: str, reason: str, position: int
) -> None:
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(expression)
    assert reason in str(info.value)
    assert info.value.position == position


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    with build_index(tmp_path) as index:
        yield index


@pytest.mark.parametrize(
    "expression",
    [
        alternating(MAX_DEPTH),
        "not " * MAX_DEPTH + "a = 1",
        "(" * MAX_DEPTH + "a = 1" + ")" * MAX_DEPTH,
        " or ".join(f"not (a = {i} and b in (1, 2))" for i in range(MAX_TERMS // 2)),
        "a in (" + ", ".join(str(i) for i in range(MAX_VALUES)) + ")",
    ],
)
def test_filters_at_the_limits_run_on_every_search_path(index: Index, expression: str) -> None:
    where = parse_filter(expression)
    for mode in PLAIN_MODES:
        index.search("install", mode=mode, where=where)
    index.documents.list(expression)


@pytest.fixture
def client(index: Index) -> Iterator[httpx.Client]:
    with serve(index) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


@pytest.mark.parametrize("expression", HOSTILE)
def test_every_http_route_taking_a_filter_answers_400(
    client: httpx.Client, expression: str
) -> None:
    responses = [
        client.post("/v1/search", json={"query": "install", "filter": expression}),
        client.post("/v1/ask", json={"question": "install?", "filter": expression}),
        client.get("/v1/documents", params={"filter": expression}),
    ]
    for response in responses:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "filter_syntax"


@pytest.mark.parametrize("command", [["search", "linux"], ["docs", "list"]])
def test_the_cli_reports_a_filter_past_a_limit_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, [*command, "--filter", DEEP_PARENTHESES])
    assert result.exit_code == 2
    assert f"nested more than {MAX_DEPTH} deep" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "where",
    [
        functools.reduce(lambda inner, _: Not(inner), range(40), Comparison("a", "=", 1)),
        Or(tuple(Comparison("a", "=", i) for i in range(495))),
        In("a", tuple(range(MAX_VALUES + 1))),
    ],
)
def test_a_filter_built_past_the_limits_is_unsupported_not_a_store_failure(
    index: Index, where: Filter
) -> None:
    for mode in PLAIN_MODES:
        with pytest.raises(UnsupportedFilter, match="the filter"):
            index.search("install", mode=mode, where=where)
    with pytest.raises(UnsupportedFilter):
        index.documents.list(where)


NUL_FILTERS = ['"ye\x00ar" exists', 'year = "20\x0021"', 'lang in ("en", "\x00")', "a\x00 = 1"]


@pytest.mark.parametrize("expression", NUL_FILTERS)
def test_a_nul_in_a_filter_is_a_400_on_every_http_route(
    client: httpx.Client, expression: str
) -> None:
    responses = [
        client.post("/v1/search", json={"query": "install", "filter": expression}),
        client.post("/v1/ask", json={"question": "install?", "filter": expression}),
        client.get("/v1/documents", params={"filter": expression}),
    ]
    for response in responses:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "filter_syntax"
        assert "NUL" in response.json()["error"]["message"]


@pytest.mark.parametrize("command", [["search", "linux"], ["docs", "list"]])
def test_the_cli_reports_a_nul_in_a_filter_on_an_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    ingest_sample_docs(tmp_path, monkeypatch)
    result = runner.invoke(app, [*command, "--filter", NUL_FILTERS[0]])
    assert result.exit_code == 2
    assert "error:" in result.output and "NUL" in result.output
    assert "Traceback" not in result.output
