"""A key bound to principals learns nothing of what it may not read by writing: an upload
named like a document it may not read, and a merge of entities, answer the same whether that
document or entity exists, and change nothing it may not read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli_helpers import runner
from ragwright import Document, Index
from ragwright.cli import app as cli
from ragwright.config import Config, load_config
from ragwright.graph.settings import GraphSettings
from ragwright.models import Hit
from ragwright.permissions import Caller
from ragwright.server import ServerSettings
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor
from server_helpers import serve

#: Uploads named ``hr-*`` are the HR group's.
RULES = Config({"permissions": [{"path": "uploads/hr-*", "principals": ["group:hr"]}]})
PAY = b"The kelp farmer earns 900 crowns.\n"


def _key(config: Path, name: str, *principals: str) -> str:
    flags = [arg for p in principals for arg in ("--principal", p)]
    added = runner.invoke(
        cli, ["keys", "add", name, "--scope", "write", *flags, "--config", str(config)]
    )
    assert added.exit_code == 0, added.output
    return str(added.stdout.strip().splitlines()[-1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, dict[str, str]], Index]]:
    """A server over an index holding the hidden ``uploads/hr-pay.md``: its URL, each key's
    header (admin: unbound; outsider: bound to ``group:x``; hr: bound to ``group:hr``)."""
    config = tmp_path / "ragwright.toml"
    secrets = {
        "admin": _key(config, "admin"),
        "outsider": _key(config, "outsider", "group:x"),
        "hr": _key(config, "hr", "group:hr"),
    }
    headers = {name: {"Authorization": f"Bearer {s}"} for name, s in secrets.items()}
    settings = ServerSettings.from_config(load_config(config))
    with (
        Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb,
        serve(kb, settings) as url,
    ):
        added = _upload(url, headers["admin"], "hr-pay.md", PAY)
        assert added.status_code == 200 and added.json()["added"] == ["uploads/hr-pay.md"]
        yield url, headers, kb


def _upload(url: str, headers: dict[str, str], name: str, data: bytes) -> httpx.Response:
    files = [("files", (name, data, "text/markdown"))]
    return httpx.post(f"{url}/v1/documents", files=files, headers=headers)


def _shape(response: httpx.Response, name: str) -> tuple[int, Any]:
    """The status and body with the file's name taken out (the rest must not differ)."""
    return response.status_code, response.text.replace(name, "NAME")


def test_an_upload_named_like_a_document_the_key_may_not_read_is_refused_alike(
    served: tuple[str, dict[str, dict[str, str]], Index],
) -> None:
    url, headers, kb = served
    outsider = headers["outsider"]
    same = _upload(url, outsider, "hr-pay.md", PAY)  # was "unchanged": the bytes are equal
    other = _upload(url, outsider, "hr-pay.md", b"Everyone earns 1 crown.\n")  # was "updated"
    absent = _upload(url, outsider, "hr-none.md", PAY)  # was "added"
    assert same.status_code == 403, same.text
    assert same.json()["error"]["code"] == "access_denied"
    assert _shape(same, "hr-pay.md") == _shape(other, "hr-pay.md") == _shape(absent, "hr-none.md")
    hidden = kb.documents.get("uploads/hr-pay.md")
    assert hidden is not None and "900" in hidden.content  # never replaced
    assert kb.documents.get("uploads/hr-none.md") is None
    # A name it may read is still its to upload, beside a refused one in the same request.
    files = [
        ("files", ("notes.md", b"Kelp notes.\n", "text/markdown")),
        ("files", ("hr-x.md", b"Kelp pay.\n", "text/markdown")),
    ]
    mixed = httpx.post(f"{url}/v1/documents", files=files, headers=outsider)
    assert mixed.status_code == 200, mixed.text
    statuses = {d["source"]: d["status"] for d in mixed.json()["documents"]}
    assert statuses == {"uploads/notes.md": "added", "uploads/hr-x.md": "failed"}
    assert kb.documents.get("uploads/hr-x.md") is None
    # The group may replace its own document; the unbound key anything.
    replaced = _upload(url, headers["hr"], "hr-pay.md", b"The kelp farmer earns 950.\n")
    assert replaced.status_code == 200 and replaced.json()["updated"] == ["uploads/hr-pay.md"]


def test_a_bound_key_never_replaces_a_stored_document_it_may_not_read(tmp_path: Path) -> None:
    """A stored document whose readers are not those the rules give its name now (a rule
    since removed, say) is refused by name like one the rules hide."""
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb:
        (tmp_path / "uploads").mkdir()
        (tmp_path / "uploads" / "hr-pay.md").write_bytes(PAY)
        kb.ingest([tmp_path / "uploads"], base=tmp_path)
    config = tmp_path / "ragwright.toml"
    outsider = {"Authorization": f"Bearer {_key(config, 'outsider', 'group:x')}"}
    settings = ServerSettings.from_config(load_config(config))
    with Index(tmp_path / "kb", config=Config()) as kb, serve(kb, settings) as url:
        refused = _upload(url, outsider, "hr-pay.md", b"Mine now.\n")
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "access_denied"
        document = kb.documents.get("uploads/hr-pay.md")
        assert document is not None and "900" in document.content
        assert document.principals == ("group:hr",)
        added = _upload(url, outsider, "hr-new.md", b"Mine.\n")  # no rule covers it now
        assert added.status_code == 200 and added.json()["added"] == ["uploads/hr-new.md"]


def test_a_bound_key_may_not_edit_or_build_the_graph_and_learns_no_name(tmp_path: Path) -> None:
    docs = tmp_path / "uploads"
    docs.mkdir()
    (docs / "guide.md").write_text("Kelp Farm grows kelp. Kelp Farm sells to Harbour Market.\n")
    (docs / "hr-pay.md").write_text("Harbour Market pays Vault Bank 900 crowns for kelp.\n")
    config = tmp_path / "ragwright.toml"
    outsider = {"Authorization": f"Bearer {_key(config, 'outsider', 'group:x')}"}
    admin = {"Authorization": f"Bearer {_key(config, 'admin')}"}
    settings = ServerSettings.from_config(load_config(config))
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb:
        assert kb.ingest([docs], base=tmp_path, extractor=CapitalizedExtractor()).ok
        with serve(kb, settings) as url:
            answers = []
            for first, second in [
                ("Vault Bank", "Nothing Here"),  # only in the hidden document
                ("Nothing There", "Nothing Here"),  # nowhere
                ("Kelp Farm", "Vault Bank"),  # one it reads, one hidden
                ("Kelp Farm", "Harbour Market"),  # both readable
            ]:
                for route in ("merge", "unmerge"):
                    body = {"first": first, "second": second}
                    answer = httpx.post(f"{url}/v1/graph/{route}", json=body, headers=outsider)
                    text = answer.text.replace(first, "A").replace(second, "B")
                    answers.append((route, answer.status_code, text))
            assert {status for _, status, _ in answers} == {403}
            assert len({(route, text) for route, _, text in answers}) == 2  # one per route
            assert "access_denied" in answers[0][2]
            built = httpx.post(f"{url}/v1/graph/build", json={}, headers=outsider)
            assert built.status_code == 403 and built.json()["error"]["code"] == "access_denied"
            stats = httpx.get(f"{url}/v1/graph/stats", headers=admin).json()
            assert stats["merges"] == 0  # nothing was recorded


# -- what a caller's rankings are made from ----------------------------------------------------

GRAPH_RULES = Config({"permissions": [{"path": "hr/**", "principals": ["group:hr"]}]})
GRAPH_DOCS = {
    "farm.md": "Kelp Farm grows kelp in the bay. Kelp Farm hires divers.",
    "market.md": "Harbour Market sells fish at dawn. Harbour Market opens early.",
    "pier.md": "North Pier has boats. Fish come in at North Pier.",
    # Only here are the farm and the market linked.
    "hr/deal.md": "Kelp Farm sells its kelp to Harbour Market. Harbour Market pays Kelp Farm.",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def two_indexes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Index, Index]]:
    """The same documents in two indexes, with the hidden ones only in the first."""
    url = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    made = []
    for name, hidden in (("everything", True), ("visible", False)):
        location = url or tmp_path / name
        kb = Index(location, collection=name, embedder=HashingEmbedder(), config=GRAPH_RULES)
        documents = [
            Document.from_text(source, text)
            for source, text in GRAPH_DOCS.items()
            if hidden or not source.startswith("hr/")
        ]
        assert kb.ingestion.documents(documents, extractor=CapitalizedExtractor()).ok
        made.append(kb)
    yield made[0], made[1]
    for kb in made:
        kb.close()


def _ranking(hits: list[Hit]) -> list[tuple[str, int, list[str], float]]:
    return [(h.chunk.id, h.rank, sorted(a.value for a in h.arms), h.score) for h in hits]


def test_graph_mode_ranks_a_restricted_caller_as_on_an_index_of_its_documents(
    two_indexes: tuple[Index, Index],
) -> None:
    everything, visible = two_indexes
    staff = Caller.of("group:staff")
    # Ungated (graph_bridge_hits 0), so the walk ranks every query: what is compared is the
    # graph each caller's walk sees (the gate would return hybrid's own scores).
    ungated = GraphSettings(bridge_hits=0)
    for query in ("Kelp Farm", "Harbour Market fish", "Kelp Farm kelp divers"):
        mine = everything.search(query, mode="graph", caller=staff, top_k=5, graph=ungated)
        theirs = visible.search(query, mode="graph", top_k=5, graph=ungated)
        assert _ranking(mine) == _ranking(theirs), query
        assert _ranking(mine) == _ranking(
            visible.search(query, mode="graph", caller=staff, top_k=5, graph=ungated)
        )
