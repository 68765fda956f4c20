"""Fuzzing the inputs that come from outside: the filter language, the HTTP JSON bodies and the
MCP tool arguments. Whatever comes in, what comes out is a result or one of ragwright's own
errors (over HTTP: a 4xx in the error shape; over MCP: a deliberate tool error), never a
foreign exception. Examples are bounded so CI stays fast."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragwright import Index
from ragwright.errors import RagwrightError
from ragwright.filters import And, Filter, Not, Or, parse_filter
from ragwright.pipeline.search.retrieval import SearchMode
from server_helpers import build_index, serve
from test_filters import leaves
from test_mcp import call

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOKENS = [
    "(", ")", ",", "not", "and", "or", "in", "exists", "true", "false", "=", "!=", "<", "<=",
    ">", ">=", "==", "source", "year", "a.b-c", '"guide.md"', "'x'", '"\\"q\\""', "3", "-2.5",
    "1e308", "1e999", "99999999999999999999", '"odd key"', "\ud800", "\x00", "é", "\u2028",
]  # fmt: skip
expressions = st.one_of(
    st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=40).map(" ".join),
    st.text(max_size=200),
    st.integers(0, 400).map(lambda n: "(" * n + "a = 1" + ")" * n),
    st.integers(0, 600).map(lambda n: " or ".join(["not a = 1"] * n)),
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with build_index(tmp_path_factory.mktemp("fuzz")) as index:
        yield index


@FUZZ
@given(expression=expressions)
def test_filter_expressions_give_results_or_ragwright_errors(index: Index, expression: str) -> None:
    try:
        where = parse_filter(expression)
        index.documents(where)
        index.search("install", mode=SearchMode.BM25, where=where)
    except RagwrightError:
        pass


trees = st.recursive(
    leaves,
    lambda inner: (
        st.builds(Not, inner)
        | st.lists(inner, min_size=1, max_size=4).map(lambda ops: And(tuple(ops)))
        | st.lists(inner, min_size=1, max_size=4).map(lambda ops: Or(tuple(ops)))
    ),
    max_leaves=120,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=trees)
def test_filters_built_in_python_give_results_or_ragwright_errors(
    index: Index, where: Filter
) -> None:
    try:
        index.documents(where)
        index.search("install", mode=SearchMode.VECTOR, where=where)
    except RagwrightError:
        pass


@pytest.fixture(scope="module")
def client(index: Index) -> Iterator[httpx.Client]:
    with serve(index) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["bm25", "vector", "hybrid", "extractive", "stuff", "\ud800"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
FIELDS = ["query", "question", "mode", "top_k", "filter", "min_score", "stream", "engine"]
bodies = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), json_values, max_size=6)


@FUZZ
@given(path=st.sampled_from(["/v1/search", "/v1/ask"]), body=bodies | json_values)
def test_http_json_bodies_give_results_or_4xx_errors(
    client: httpx.Client, path: str, body: Any
) -> None:
    content = json.dumps(body, allow_nan=True)  # NaN and Infinity literals included
    response = client.post(path, content=content, headers={"Content-Type": "application/json"})
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert set(response.json()["error"]) >= {"code", "message", "status"}


@settings(max_examples=200, deadline=None)
@given(expression=expressions)
def test_http_filter_query_parameters_give_results_or_4xx_errors(
    client: httpx.Client, expression: str
) -> None:
    safe = expression.encode("utf-8", "replace").decode("utf-8")  # a URL carries UTF-8 only
    response = client.get("/v1/documents", params={"filter": safe})
    assert response.status_code < 500, response.text


TOOLS = {
    "search": ["query", "top_k", "mode", "filter", "sources", "collection"],
    "ask": ["question", "top_k", "filter", "sources", "engine", "collection"],
    "get_chunk": ["chunk_id"],
    "get_document": ["document", "char_start", "max_chars", "collection"],
    "list_sources": ["filter", "offset", "limit", "collection"],
}
calls = st.sampled_from(sorted(TOOLS)).flatmap(
    lambda tool: st.tuples(
        st.just(tool),
        st.dictionaries(st.sampled_from(TOOLS[tool]), json_values | expressions, max_size=4),
    )
)


@settings(max_examples=150, deadline=None)
@given(tool_call=calls)
def test_mcp_tool_arguments_give_results_or_deliberate_tool_errors(
    index: Index, tool_call: tuple[str, dict[str, Any]]
) -> None:
    tool, arguments = tool_call
    result = call(index, tool, arguments)
    if result.is_error:
        # A crash is reported as exactly this, with its text kept on the server.
        assert result.content[0].text != f"Error executing tool {tool}", arguments
