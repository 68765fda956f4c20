"""Inputs of the wrong type or not quite text are refused with a typed error on every surface:
no string or boolean for an integer, no NaN or infinity for a score, no lone surrogate."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragwright import Index
from ragwright.errors import ConfigError, FilterSyntaxError
from server_helpers import build_index, serve
from test_mcp import call


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with build_index(tmp_path_factory.mktemp("strict")) as index:
        yield index


@pytest.fixture(scope="module")
def client(index: Index) -> Iterator[httpx.Client]:
    with serve(index) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/search", '{"query": "install", "top_k": "10"}'),
        ("/v1/search", '{"query": "install", "top_k": true}'),
        ("/v1/search", '{"query": "install", "top_k": 10.0}'),
        ("/v1/search", '{"query": "install", "mode": "bm25", "min_score": NaN}'),
        ("/v1/search", '{"query": "install", "mode": "bm25", "min_score": Infinity}'),
        ("/v1/search", '{"query": "install", "mode": "bm25", "min_score": "0.5"}'),
        ("/v1/ask", '{"question": "install?", "top_k": "5"}'),
        ("/v1/ask", '{"question": "install?", "stream": "true"}'),
        ("/v1/ask", '{"question": "install?", "stream": 1}'),
    ],
)
def test_http_numbers_and_booleans_are_strict(client: httpx.Client, path: str, body: str) -> None:
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"


def test_http_still_takes_an_integer_score(client: httpx.Client) -> None:
    body = {"query": "install", "mode": "bm25", "min_score": 0, "top_k": 3}
    assert client.post("/v1/search", json=body).status_code == 200


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search", {"query": "install", "top_k": "10"}),
        ("search", {"query": "install", "top_k": True}),
        ("ask", {"question": "install?", "top_k": 2.0}),
        ("get_document", {"document": "docs/guide.md", "char_start": True}),
        ("get_document", {"document": "docs/guide.md", "max_chars": "100"}),
        ("list_sources", {"limit": "1"}),
        ("list_sources", {"offset": False}),
    ],
)
def test_mcp_integers_are_strict(index: Index, tool: str, arguments: dict[str, object]) -> None:
    result = call(index, tool, arguments)
    assert result.is_error
    assert "valid integer" in result.content[0].text


LONE = "install \ud800 on linux"


def test_a_lone_surrogate_is_a_typed_error_in_the_python_api(index: Index) -> None:
    with pytest.raises(ConfigError, match="lone surrogate"):
        index.search(LONE)
    with pytest.raises(ConfigError, match="lone surrogate"):
        index.ask(LONE)
    with pytest.raises(FilterSyntaxError) as raised:
        index.search("install", where='source = "\udcff"')
    assert raised.value.position == len('source = "')
    str(raised.value).encode("utf-8")  # the message itself is valid text


@pytest.mark.parametrize(
    "body", ['{"query": "install \\ud800"}', '{"query": "x", "filter": "source = \\"\\udc80\\""}']
)
def test_a_lone_surrogate_over_http_is_refused_by_validation(
    client: httpx.Client, body: str
) -> None:
    response = client.post("/v1/search", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "valid string" in response.json()["error"]["message"]


def test_a_lone_surrogate_over_mcp_is_a_tool_error(index: Index) -> None:
    result = call(index, "search", {"query": LONE})
    assert result.is_error and "valid string" in result.content[0].text
