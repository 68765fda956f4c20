"""Communities over a federation's HTTP app: each member's own under its name (no community
spans members), one community asked for in a named member with citations that resolve in
that member, a member without communities left out with a warning (strict: an error), and
typed errors for the rest."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragwright import Federation, Index
from ragwright.errors import AccessDenied
from ragwright.models.communities import CommunitySettings
from ragwright.permissions import Caller
from ragwright.server import ServerSettings, create_federation_app
from ragwright.server.runner import running, server_for
from ragwright.testing import HashingEmbedder

ALPHA = {
    "summit.md": "Barack Obama met Angela Merkel in Berlin.\n\nObama flew home from Berlin.\n",
    "lab.md": "IBM opened a lab in Zurich. The I.B.M. team grew.\n",
}
BETA = {"ships.md": "Maersk sails from Rotterdam to Singapore. Maersk docks in Rotterdam.\n"}


def _build(root: Path, name: str, docs: dict[str, str], clustered: bool) -> Path:
    folder = root / f"{name}-docs"
    folder.mkdir()
    for file, text in docs.items():
        (folder / file).write_text(text, "utf-8")
    with Index(root / name, embedder=HashingEmbedder()) as index:
        index.ingest([folder], extractor="capitalized")
        if clustered:
            index.build_communities(CommunitySettings(min_mentions=1))
    return root / name


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("members")
    return {
        "alpha": _build(root, "alpha", ALPHA, clustered=True),
        "beta": _build(root, "beta", BETA, clustered=True),
        "plain": _build(root, "plain", BETA, clustered=False),
    }


@contextlib.contextmanager
def serving(members: dict[str, Path], names: list[str], strict: bool = False) -> Iterator[str]:
    """A federation of the named members, served on loopback; yields its base URL."""
    opened = [(n, Index(members[n], create=False, read_only=True)) for n in names]
    federation = Federation(opened, strict=strict)
    settings = ServerSettings()
    app = create_federation_app(federation, settings, host="127.0.0.1")
    try:
        with running(server_for(app, "127.0.0.1", 0, settings, log_level="warning")) as url:
            yield url
    finally:
        federation.close()
        for _, index in opened:
            index.close()


def test_each_member_s_communities_under_its_name(members: dict[str, Path]) -> None:
    with serving(members, ["alpha", "beta"]) as url, httpx.Client(base_url=url, timeout=30) as c:
        listed = c.get("/v1/graph/communities")
        assert listed.status_code == 200, listed.text
        body = listed.json()
        assert body["content_trust"] == "untrusted" and body["warnings"] == []
        assert [m["index"] for m in body["members"]] == ["alpha", "beta"]
        by_member = {m["index"]: m for m in body["members"]}
        alpha = {k for x in by_member["alpha"]["communities"] for k in x["members"]}
        beta = {k for x in by_member["beta"]["communities"] for k in x["members"]}
        assert {"ibm", "zurich"} <= alpha and "rotterdam" in beta
        assert not alpha & beta  # no community spans members
        assert by_member["beta"]["build"]["levels"][0]["disconnected"] == 0
        level0 = c.get("/v1/graph/communities", params={"level": 0}).json()
        levels = {x["level"] for m in level0["members"] for x in m["communities"]}
        assert levels == {0}

        community = next(x for x in by_member["alpha"]["communities"] if "zurich" in x["members"])
        one = c.get(f"/v1/graph/communities/{community['id']}", params={"index": "alpha"})
        assert one.status_code == 200, one.text
        shown = one.json()
        assert shown["index"] == "alpha" and shown["community"]["id"] == community["id"]
        assert shown["citations"]
        for citation in shown["citations"]:
            assert citation["index"] == "alpha"
            document = c.get(
                f"/v1/documents/{citation['document_id']}", params={"index": "alpha"}
            ).json()
            span = document["content"][citation["char_start"] : citation["char_end"]]
            assert span == citation["quote"]

        missing = c.get("/v1/graph/communities/999", params={"index": "beta"})
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "unknown_community"
        unnamed = c.get(f"/v1/graph/communities/{community['id']}")
        assert unnamed.status_code == 422 and "Traceback" not in unnamed.text
        nobody = c.get("/v1/graph/communities/0", params={"index": "nobody"})
        assert nobody.status_code == 400
        assert nobody.json()["error"]["code"] == "invalid_argument"
        assert c.get("/v1/graph/communities", params={"level": -1}).status_code == 422


def test_a_member_without_communities_is_left_out_or_with_strict_refused(
    members: dict[str, Path],
) -> None:
    with serving(members, ["alpha", "plain"]) as url:
        partial = httpx.get(f"{url}/v1/graph/communities", timeout=30)
        refused = httpx.get(f"{url}/v1/graph/communities/0", params={"index": "plain"}, timeout=30)
    assert partial.status_code == 200
    assert [m["index"] for m in partial.json()["members"]] == ["alpha"]
    [warning] = partial.json()["warnings"]
    assert "index plain" in warning and "no communities" in warning
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "graph_not_built"
    with serving(members, ["alpha", "plain"], strict=True) as url:
        strict = httpx.get(f"{url}/v1/graph/communities", timeout=30)
    assert strict.status_code == 409 and strict.json()["error"]["code"] == "graph_not_built"
    with serving(members, ["plain"]) as url:
        none = httpx.get(f"{url}/v1/graph/communities", timeout=30)
    assert none.status_code == 409 and none.json()["error"]["code"] == "graph_not_built"


def test_a_caller_bound_to_principals_is_refused(members: dict[str, Path]) -> None:
    with Index(members["alpha"], create=False, read_only=True) as alpha:
        federation = Federation([("alpha", alpha)])
        try:
            with pytest.raises(AccessDenied):
                federation.communities(caller=Caller.of("ana"))
            with pytest.raises(AccessDenied):
                federation.community(0, "alpha", caller=Caller.of("ana"))
            assert federation.communities().members[0].index == "alpha"
        finally:
            federation.close()
