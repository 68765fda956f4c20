"""Document permissions through the Python API: ``[[permissions]]`` rules and a sync source's
principals decide who reads a document; a `Caller` sees only that in every search mode,
lookup, count, answer and federated search, and views built from every document are refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragwright import Federation, Index
from ragwright.config import Config
from ragwright.errors import AccessDenied, ConfigError
from ragwright.models import Hit
from ragwright.permissions import EVERYONE, Caller, PermissionRules
from ragwright.pipeline.search.request import SearchRequest
from ragwright.ports import Checkpoint, ListingOutcome, SourceItem
from ragwright.testing import HashingEmbedder
from ragwright.testing.extractor import CapitalizedExtractor

RULES = Config({"permissions": [{"path": "hr/**", "principals": ["group:hr"]}]})
HR = Caller.of("group:hr")
STAFF = Caller.of("group:staff")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "guide.md").write_text("The kelp guide: kelp forests grow fast.\n")
    (docs / "hr" / "salaries.md").write_text("Salaries: the kelp farmer earns 900 crowns.\n")
    return docs


@pytest.fixture
def kb(tmp_path: Path, folder: Path) -> Iterator[Index]:
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as opened:
        opened.name_sources_from(folder)
        opened.ingest(folder)
        yield opened


def sources(hits: list[Hit]) -> set[str]:
    return {hit.source for hit in hits}


def test_a_rule_restricts_the_documents_under_its_path(kb: Index) -> None:
    salaries = kb.document("hr/salaries.md")
    assert salaries is not None and salaries.principals == ("group:hr",)
    guide = kb.document("guide.md")
    assert guide is not None and guide.principals == ()


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_every_search_mode_returns_only_what_the_caller_reads(kb: Index, mode: str) -> None:
    assert sources(kb.search("kelp salaries", mode=mode)) == {"guide.md", "hr/salaries.md"}
    assert sources(kb.search("kelp salaries", mode=mode, caller=HR)) == {
        "guide.md",
        "hr/salaries.md",
    }
    assert sources(kb.search("kelp salaries", mode=mode, caller=STAFF)) == {"guide.md"}
    assert sources(kb.search("salaries", mode=mode, caller=STAFF, where='source != "x"')) <= {
        "guide.md"
    }


def test_lookups_and_counts_hide_unreadable_documents(kb: Index) -> None:
    salaries = kb.document("hr/salaries.md")
    assert salaries is not None
    chunk_id = kb.chunks_of(salaries.id)[0].id
    assert kb.document("hr/salaries.md", caller=STAFF) is None
    assert kb.document(salaries.id, caller=STAFF) is None
    assert kb.chunk(chunk_id, caller=STAFF) is None
    assert kb.chunks([chunk_id], caller=STAFF) == {}
    assert kb.chunks_of(salaries.id, caller=STAFF) == []
    assert kb.chunk(chunk_id, caller=HR) is not None
    assert [d.source for d in kb.documents(caller=STAFF)] == ["guide.md"]
    everything, staff = kb.stats(), kb.stats(caller=STAFF)
    assert (everything.documents, staff.documents) == (2, 1)
    assert staff.chunks == everything.chunks - len(kb.chunks_of(salaries.id))
    assert staff.characters == everything.characters - len(salaries.content)


def test_an_answer_never_cites_or_quotes_what_the_caller_may_not_read(kb: Index) -> None:
    answer = kb.ask("What does the kelp farmer earn?", mode="hybrid", caller=STAFF)
    assert "900" not in answer.text
    assert {c.source for c in answer.citations} <= {"guide.md"}
    assert any("900" in c.quote for c in kb.ask("What does the kelp farmer earn?").citations)


def test_views_built_from_every_document_are_refused_to_a_restricted_caller(kb: Index) -> None:
    with pytest.raises(AccessDenied, match="global search"):
        kb.search("kelp", mode="global", caller=STAFF)
    with pytest.raises(AccessDenied, match="entity graph"):
        kb.entity("kelp", caller=STAFF)
    with pytest.raises(AccessDenied, match="entity graph"):
        kb.find_entities("kelp", caller=STAFF)
    with pytest.raises(AccessDenied, match="graph context"):
        kb.ask("kelp?", caller=STAFF, engine="stuff", graph_context=True)


def test_a_documents_principals_are_its_sources_and_its_rules() -> None:
    rules = PermissionRules.from_config(RULES)
    assert rules.principals_for("hr/a.md", ("user:bo", " ", "")) == ("group:hr", "user:bo")
    assert rules.principals_for("hrx/a.md") == () and rules.principals_for("a/hr/b.md") == ()


def test_the_unrestricted_caller_is_the_default() -> None:
    assert not EVERYONE.restricted and Caller.of().restricted
    assert EVERYONE.scope(None) is None


def test_bad_rules_and_principals_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="principals"):
        PermissionRules.from_config(Config({"permissions": [{"path": "hr/**"}]}))
    with pytest.raises(ConfigError, match="unknown key"):
        PermissionRules.from_config(
            Config({"permissions": [{"path": "a", "principals": ["p"], "who": 1}]})
        )
    with pytest.raises(ConfigError, match="principal"):
        Caller.of("")
    with pytest.raises(ConfigError, match="caller"):
        SearchRequest(caller="group:hr")  # type: ignore[arg-type]


def test_a_changed_rule_rewrites_the_documents_it_now_covers(tmp_path: Path, folder: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.name_sources_from(folder)
        kb.ingest(folder)
        assert sources(kb.search("salaries", caller=STAFF)) == {"guide.md", "hr/salaries.md"}
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb:
        report = kb.ingest(folder)
        assert report.updated == ["hr/salaries.md"]
        assert sources(kb.search("salaries", caller=STAFF)) == {"guide.md"}


class Shared:
    """A source whose items carry the principals the service shares them with."""

    def list_items(self, checkpoint: Checkpoint, outcome: ListingOutcome) -> Iterator[SourceItem]:
        outcome.complete = True
        yield SourceItem("a", "1", "svc:a", "a.txt", principals=("user:ana",))
        yield SourceItem("b", "1", "svc:b", "b.txt")

    def fetch(self, item: SourceItem) -> bytes:
        return f"Walrus notes of item {item.key}.".encode()

    def close(self) -> None:
        pass


def test_a_sync_sources_principals_are_enforced(tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.sync_source("svc", Shared())
        document = kb.document("svc:a")
        assert document is not None and document.principals == ("user:ana",)
        assert "principals" not in document.metadata  # a stored field, not free metadata
        assert sources(kb.search("walrus", caller=Caller.of("user:bo"))) == {"svc:b"}
        assert sources(kb.search("walrus", caller=Caller.of("user:ana"))) == {"svc:a", "svc:b"}


def test_a_federated_search_applies_the_caller_in_every_member(
    tmp_path: Path, folder: Path
) -> None:
    for name in ("one", "two"):
        with Index(tmp_path / name, embedder=HashingEmbedder(), config=RULES) as member:
            member.name_sources_from(folder)
            member.ingest(folder)
    with Federation.open([str(tmp_path / "one"), str(tmp_path / "two")]) as federation:
        everything = federation.search("kelp salaries")
        assert {h.source for h in everything.hits} == {"guide.md", "hr/salaries.md"}
        found = federation.search("kelp salaries", caller=STAFF)
        assert {h.source for h in found.hits} == {"guide.md"}
        answer = federation.ask("What does the kelp farmer earn?", caller=STAFF, mode="hybrid")
        assert "900" not in answer.text
        salaries = federation.document("hr/salaries.md")
        assert salaries is not None
        assert federation.document("hr/salaries.md", caller=STAFF) is None


class Copycat(Shared):
    """A second source listing the same documents as `Shared` (its ``svc:`` names)."""


def test_a_second_source_holding_the_same_documents_is_refused_naming_both(
    tmp_path: Path,
) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.sync_source("first", Shared())
        before = {d.source: kb.document(d.source) for d in kb.documents()}
        with pytest.raises(ConfigError, match="'first' and 'second' both hold 'svc:a'"):
            kb.sync_source("second", Copycat())
        assert {d.source: kb.document(d.source) for d in kb.documents()} == before
        assert kb.sync_checkpoint("second").items == {}
        assert kb.sync_source("first", Shared()).unchanged == 2


def test_graph_mode_only_reorders_what_the_caller_may_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "guide.md").write_text("Kelp Farm grows kelp. Kelp Farm sells to Harbour Market.\n")
    (docs / "hr" / "pay.md").write_text("Harbour Market pays Kelp Farm 900 crowns for kelp.\n")
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb:
        kb.name_sources_from(docs)
        kb.ingest(docs, extractor=CapitalizedExtractor())
        assert sources(kb.search("Harbour Market kelp", mode="graph")) == {
            "guide.md",
            "hr/pay.md",
        }
        assert sources(kb.search("Harbour Market kelp", mode="graph", caller=STAFF)) == {"guide.md"}
        answer = kb.ask("What does Harbour Market pay?", mode="graph", caller=STAFF)
        assert "900" not in answer.text


def test_a_document_without_chunks_is_seen_by_those_who_may_read_it(
    tmp_path: Path, folder: Path
) -> None:
    (folder / "blank.md").write_text("\n\n", "utf-8")
    (folder / "hr" / "blank.md").write_text("\n\n", "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=RULES) as kb:
        kb.name_sources_from(folder)
        kb.ingest(folder)
        assert kb.chunks_of(kb.document("hr/blank.md").id) == []  # type: ignore[union-attr]
        assert kb.document("blank.md", caller=STAFF) is not None
        assert kb.document("hr/blank.md", caller=STAFF) is None
        assert kb.document("hr/blank.md", caller=HR) is not None
        listed = {d.source for d in kb.documents(caller=HR)}
        assert listed == {"guide.md", "blank.md", "hr/salaries.md", "hr/blank.md"}
        assert {d.source for d in kb.documents(caller=STAFF)} == {"guide.md", "blank.md"}
        assert (kb.stats(caller=STAFF).documents, kb.stats(caller=HR).documents) == (2, 4)
