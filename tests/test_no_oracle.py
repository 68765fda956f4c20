"""No oracle: a caller bound to principals gets, on every surface, the responses it would get
from an index built from only the documents it may read (hits, scores, ranks, arms, routes,
answers, counts, listings, statuses and errors), on both stores.

Index A holds every document; for each caller, index B holds only what that caller may read
(built the same way, in the same order). Hypothesis draws the caller (so which documents are
hidden), the query, the mode and a user's filter; each request goes through the HTTP API (in
process) to A as the caller and to B both as the caller and as an unrestricted key. The
writes (uploads, deletes, graph edits) run as one sequence on fresh indexes, A and B side by
side, every answer compared as it comes.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pg_server import create_database, drop_database
from ragwright import Document, Index
from ragwright.config import Config
from ragwright.models.communities import CommunitySettings
from ragwright.permissions import Caller
from ragwright.server import ServerSettings, create_app
from ragwright.server.keys import ApiKey, Scope, digest_of
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor

RULES = Config(
    {
        "permissions": [
            {"path": "a/**", "principals": ["group:a"]},
            {"path": "b/**", "principals": ["group:b"]},
            {"path": "ab/**", "principals": ["group:a", "group:b"]},
            {"path": "uploads/a-*", "principals": ["group:a"]},
        ]
    }
)
#: Ingested in this order into every index (so equal chunks get rows in the same order).
CORPUS = {
    "guide.md": "Kelp Farm grows kelp in the bay. Divers from Kelp Farm count the kelp at dawn.",
    "market.md": "Harbour Market sells fish and kelp at dawn. Harbour Market opens for divers.",
    "uploads/pub.md": "North Pier lands fish. The walrus sleeps on North Pier all day.",
    "a/pay.md": "Kelp Farm pays its divers 900 crowns. Harbour Market pays Kelp Farm for kelp.",
    "uploads/a-plan.md": "The walrus census at North Pier counts every walrus. Vault Bank pays.",
    "b/review.md": "Vault Bank reviews Harbour Market. The walrus audit found kelp fraud.",
    "ab/joint.md": "Kelp Farm and Vault Bank share North Pier. Walrus walrus kelp fjord.",
    "ab/long.md": "Fjord tides. " + "The fjord holds kelp and cold water and fish. " * 8,
}
CALLERS = {
    "nobody": (),
    "a": ("group:a",),
    "b": ("group:b",),
    "both": ("group:a", "group:b"),
    "stranger": ("group:z",),
}
QUERIES = [
    "kelp",
    "walrus",
    "Kelp Farm",
    "Harbour Market divers",
    "North Pier walrus",
    "Vault Bank",
    "fish at dawn",
    "kelp fraud audit",
    "crowns",
    "fjord",
]
MODES = ["bm25", "vector", "hybrid", "graph", "auto"]
FILTERS = [None, 'source != "market.md"', 'source != "ab/joint.md"']


def visible(caller: str) -> list[str]:
    """The sources ``caller`` may read, in corpus order."""
    allowed = Caller.of(*CALLERS[caller])
    rules = RULES.data["permissions"]
    return [
        source
        for source in CORPUS
        if allowed.may_read(
            [p for rule in rules if _matches(rule["path"], source) for p in rule["principals"]]
        )
    ]


def _matches(pattern: str, source: str) -> bool:
    return fnmatch.fnmatchcase(source, pattern)


def secret(name: str) -> str:
    return f"rw_test_{name}"


#: The server's keys: one per caller (write scope, bound), and an unbound admin.
SETTINGS = ServerSettings(
    keys=(
        ApiKey("admin", Scope.WRITE, digest_of(secret("admin"))),
        *(
            ApiKey(name, Scope.WRITE, digest_of(secret(name)), principals)
            for name, principals in CALLERS.items()
        ),
    )
)


def as_key(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret(name)}"}


@dataclass
class Served:
    """An index and an in-process client of its HTTP API."""

    index: Index
    client: TestClient

    def close(self) -> None:
        self.client.close()
        self.index.close()


def serve(location: str | Path, collection: str, sources: list[str]) -> Served:
    """An index of ``sources`` (corpus order) with its graph and communities built."""
    kb = Index(location, collection=collection, embedder=HashingEmbedder(), config=RULES)
    documents = [Document.from_text(source, CORPUS[source]) for source in sources]
    assert kb.ingestion.documents(documents, extractor=CapitalizedExtractor()).ok
    kb.communities.build(CommunitySettings(min_mentions=1))
    settled(kb)
    return Served(kb, TestClient(create_app(kb, SETTINGS)))


def settled(kb: Index) -> None:
    """Wait for the SQLite store's derived caches (built in the background, while FTS5 and
    the rows answer): each way of answering is the same to a caller, but FTS5's bm25() and
    the keyword cache may differ in a score's last bits."""
    wait = getattr(kb._store, "wait_for_caches", None)
    if wait is not None:
        wait()


@dataclass
class World:
    """Index A (every document) and, made when first needed, an index B per set of visible
    documents."""

    location: Any  # a directory factory or a PostgreSQL URL
    everything: Served
    visible: dict[tuple[str, ...], Served] = field(default_factory=dict)

    def of(self, caller: str) -> Served:
        sources = tuple(visible(caller))
        if sources not in self.visible:
            name = f"v{len(self.visible)}"
            self.visible[sources] = serve(self.location(name), name, list(sources))
        return self.visible[sources]

    def close(self) -> None:
        for served in [self.everything, *self.visible.values()]:
            served.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    if request.param == "sqlite":
        root = tmp_path_factory.mktemp("oracle")

        def location(name: str) -> str | Path:
            return root / name

        made = World(location, serve(location("all"), "all", list(CORPUS)))
        yield made
        made.close()
        return
    server = request.getfixturevalue("pg_server")
    url = create_database(server)
    made = World(lambda _: url, serve(url, "all", list(CORPUS)))
    yield made
    made.close()
    drop_database(server, url)


def answer(response: httpx.Response) -> tuple[int, Any]:
    """A response as compared: status and JSON body, less what names the index itself."""
    body = response.json()
    if isinstance(body, dict):
        body.pop("index", None)  # the index's location (a setting, not its documents)
    return response.status_code, body


def assert_same(got: Any, want: Any, where: str = "") -> None:
    """``got`` equals ``want``, but for floats, equal to float32's precision: a similarity
    is a float32 product whose last bit BLAS's blocking over the matrix's rows may change
    (rows and ranks must be equal exactly)."""
    if isinstance(got, float) and isinstance(want, float):
        assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9), (where, got, want)
    elif isinstance(got, dict) and isinstance(want, dict):
        assert sorted(got) == sorted(want), (where, sorted(got), sorted(want))
        for key in got:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(got, list | tuple) and isinstance(want, list | tuple):
        assert len(got) == len(want), (where, got, want)
        for n, (a, b) in enumerate(zip(got, want, strict=True)):
            assert_same(a, b, f"{where}[{n}]")
    else:
        assert got == want, (where, got, want)


def same_three_ways(world: World, caller: str, method: str, path: str, **kwargs: Any) -> None:
    """The caller's answer from A equals its answer from B, and, when it succeeds, the
    unrestricted key's answer from B (B holds only what the caller may read)."""
    mine = answer(world.everything.client.request(method, path, headers=as_key(caller), **kwargs))
    theirs = world.of(caller).client
    alone = answer(theirs.request(method, path, headers=as_key(caller), **kwargs))
    assert_same(mine, alone, f"{caller} {method} {path} {kwargs}")
    if mine[0] == 200 and not path.endswith("/stats"):
        admin = answer(theirs.request(method, path, headers=as_key("admin"), **kwargs))
        assert_same(mine, admin, f"{caller} {method} {path} {kwargs} (unrestricted on B)")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    caller=st.sampled_from(sorted(CALLERS)),
    query=st.sampled_from(QUERIES),
    mode=st.sampled_from(MODES),
    where=st.sampled_from(FILTERS),
    top_k=st.sampled_from([3, 10]),
)
def test_searches_and_answers_are_those_of_an_index_of_what_the_caller_reads(
    world: World, caller: str, query: str, mode: str, where: str | None, top_k: int
) -> None:
    body: dict[str, Any] = {"query": query, "mode": mode, "top_k": top_k}
    if where is not None:
        body["filter"] = where
    same_three_ways(world, caller, "POST", "/v1/search", json=body)
    asked = {"question": query, "mode": mode, "top_k": top_k}
    if where is not None:
        asked["filter"] = where
    same_three_ways(world, caller, "POST", "/v1/ask", json=asked)


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_counts_listings_and_refusals_are_those_of_an_index_of_what_it_reads(
    world: World, caller: str
) -> None:
    for method, path, kwargs in [
        ("GET", "/v1/stats", {}),
        ("GET", "/v1/documents", {}),
        ("GET", "/v1/documents?filter=source%20!%3D%20%22guide.md%22", {}),
        ("GET", "/v1/documents/a/pay.md", {}),
        ("GET", "/v1/documents/guide.md", {}),
        ("POST", "/v1/search", {"json": {"query": "kelp", "mode": "global"}}),
        ("POST", "/v1/ask", {"json": {"question": "kelp?", "mode": "global"}}),
        ("GET", "/v1/graph/stats", {}),
        ("GET", "/v1/graph/entities?q=kelp", {}),
        ("GET", "/v1/graph/entities/Vault%20Bank", {}),
        ("GET", "/v1/graph/entities/Nothing%20Here", {}),
        ("GET", "/v1/graph/neighbourhood/Kelp%20Farm", {}),
        ("GET", "/v1/graph/communities", {}),
        ("GET", "/v1/graph/communities/0", {}),
        ("GET", "/v1/graph/communities/999", {}),
    ]:
        same_three_ways(world, caller, method, path, **kwargs)
    refused = world.everything.client.post(
        "/v1/search", json={"query": "kelp", "mode": "global"}, headers=as_key(caller)
    )
    assert refused.status_code == 403


# -- writes: one sequence, on A and B side by side ---------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    """Fresh A and B for the caller ``b`` (writes change them)."""
    if request.param == "sqlite":
        locations: list[str | Path] = [tmp_path / "all", tmp_path / "visible"]
    else:
        url = request.getfixturevalue("pg_url")
        locations = [url, url]
    made = (
        serve(locations[0], "everything", list(CORPUS)),
        serve(locations[1], "visible", visible("b")),
    )
    yield made
    for served in made:
        served.close()


def _files(*named: tuple[str, str]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, text.encode(), "text/markdown")) for name, text in named]


def test_writes_answer_and_change_as_on_an_index_of_what_the_caller_reads(
    pair: tuple[Served, Served],
) -> None:
    everything, alone = pair
    pay_id = everything.index.documents.get("a/pay.md").id  # type: ignore[union-attr]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", "/v1/documents", {"files": _files(("a-plan.md", CORPUS["uploads/a-plan.md"]))}),
        ("POST", "/v1/documents", {"files": _files(("a-plan.md", "Mine now."))}),
        ("POST", "/v1/documents", {"files": _files(("a-none.md", "Mine."))}),
        ("POST", "/v1/documents", {"files": _files(("pub.md", CORPUS["uploads/pub.md"]))}),
        ("POST", "/v1/documents", {"files": _files(("pub.md", "North Pier is closed."))}),
        ("POST", "/v1/documents", {"files": _files(("fresh.md", "Kelp Farm buys a boat."))}),
        ("POST", "/v1/documents", {"files": _files(("x.md", "Walrus."), ("a-x.md", "W."))}),
        ("DELETE", "/v1/documents/a/pay.md", {}),
        ("DELETE", f"/v1/documents/{pay_id}", {}),
        ("DELETE", "/v1/documents/uploads/a-plan.md", {}),
        ("DELETE", "/v1/documents/market.md", {}),
        ("POST", "/v1/graph/merge", {"json": {"first": "Kelp Farm", "second": "Vault Bank"}}),
        ("POST", "/v1/graph/merge", {"json": {"first": "Kelp Farm", "second": "No Such"}}),
        ("POST", "/v1/graph/unmerge", {"json": {"first": "Kelp Farm", "second": "Vault Bank"}}),
        ("POST", "/v1/graph/build", {"json": {}}),
    ]
    reads: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v1/stats", {}),
        ("GET", "/v1/documents", {}),
        ("POST", "/v1/search", {"json": {"query": "walrus kelp", "mode": "hybrid"}}),
        ("POST", "/v1/search", {"json": {"query": "Kelp Farm", "mode": "graph"}}),
    ]
    for method, path, kwargs in steps:
        mine = answer(everything.client.request(method, path, headers=as_key("b"), **kwargs))
        theirs = answer(alone.client.request(method, path, headers=as_key("b"), **kwargs))
        assert_same(mine, theirs, f"{method} {path}")
        for read, where, options in reads:
            got = answer(everything.client.request(read, where, headers=as_key("b"), **options))
            want = answer(alone.client.request(read, where, headers=as_key("b"), **options))
            assert_same(got, want, f"{where} after {method} {path}")
    hidden = everything.index.documents.get("uploads/a-plan.md")
    assert hidden is not None and hidden.content == CORPUS["uploads/a-plan.md"]
    assert everything.index.documents.get("a/pay.md") is not None
