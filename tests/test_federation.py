"""Federated search in Python: a SQLite index and a PostgreSQL index with different embedders
searched as one, their rankings fused by rank, every hit and citation naming its member, and
lookups going to that member; failing, late and filter-refusing members."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from federation_helpers import (
    FieldRefusingIndex,
    build_personal,
    build_team,
    personal,
    team,
)
from pg_server import create_database, start_server
from ragwright import Federation, Index
from ragwright.answers.extractive import ExtractiveOptions
from ragwright.config import Config
from ragwright.errors import ConfigError, GraphNotBuilt, MemberUnavailable, UnsupportedFilter
from ragwright.federation import FederationSettings, MemberSpec

__all__ = ["personal", "team"]  # fixtures, used by name


@pytest.fixture(scope="module")
def both(team: Path, personal: str) -> Iterator[Federation]:
    with Federation.open([f"team={team}", f"personal={personal}"], timeout=30) as federation:
        yield federation


def test_members_keep_their_own_spaces(both: Federation) -> None:
    spaces = {name: both.member(name).space for name in both.names}
    assert spaces["team"] is not None and spaces["personal"] is not None
    assert (spaces["team"].dimension, spaces["personal"].dimension) == (128, 320)
    assert both.member("personal").display_location.startswith("postgresql://")


def test_hits_from_both_members_fused_by_rank_each_naming_its_member(both: Federation) -> None:
    found = both.search("key rotation", top_k=4)
    assert found.warnings == () and set(found.answered) == {"team", "personal"}
    by_member = {name: both.member(name).search("key rotation", top_k=4) for name in both.names}
    # Reciprocal-rank fusion with equal weights: each member's best hit comes first, and each
    # member's hits keep their own order.
    assert [hit.chunk.id for hit in found.hits[:2]] == [
        by_member["team"][0].chunk.id,  # a tie: the first member listed goes first
        by_member["personal"][0].chunk.id,
    ]
    for name, own in by_member.items():
        fused_order = [hit.chunk.id for hit in found.hits if hit.index == name]
        assert fused_order == [hit.chunk.id for hit in own][: len(fused_order)]
    assert [hit.rank for hit in found.hits] == list(range(1, len(found.hits) + 1))
    assert all(hit.scale.value == "fused" for hit in found.hits)


def test_every_hit_resolves_to_an_exact_span_in_its_member(both: Federation) -> None:
    found = both.search("key rotation keys", top_k=10)
    assert {hit.index for hit in found.hits} == {"team", "personal"}
    for hit in found.hits:
        assert hit.index is not None
        member = both.member(hit.index)
        document = member.documents.get(hit.chunk.document_id)
        assert document is not None and document.source == hit.source
        assert document.content[hit.chunk.char_start : hit.chunk.char_end] == hit.chunk.text
        other = next(name for name in both.names if name != hit.index)
        assert both.member(other).documents.chunk(hit.chunk.id) is None
        assert both.chunk(hit.chunk.id) == (hit.index, hit.chunk)


def test_lookups_go_to_the_named_member_or_the_first_holding_it(both: Federation) -> None:
    located = both.document("notes/keys.md")
    assert located is not None and located[0] == "personal"
    assert both.document("notes/keys.md", "team") is None
    name, document = located
    chunks = both.chunks_of(document.id, name)
    assert chunks and all(c.document_id == document.id for c in chunks)
    assert both.chunk(chunks[0].id, "personal") == ("personal", chunks[0])
    with pytest.raises(ConfigError, match="no federation member 'nobody'"):
        both.chunk(chunks[0].id, "nobody")
    listed = both.documents()
    assert [(n, info.source) for n, info in listed] == [
        ("team", "team/backups.md"),
        ("team", "team/rotation.md"),
        ("personal", "notes/garden.md"),
        ("personal", "notes/keys.md"),
    ]


def test_a_filter_applies_in_every_member(both: Federation) -> None:
    found = both.search("key rotation backups tomatoes", where="year >= 2024", top_k=10)
    assert {(hit.index, hit.source) for hit in found.hits} == {
        ("team", "team/rotation.md"),
        ("personal", "notes/keys.md"),
    }
    only_team = both.search("key rotation", where='team = "platform"', top_k=10)
    assert {hit.index for hit in only_team.hits} == {"team"}


def test_ask_cites_spans_in_the_member_holding_each(both: Federation) -> None:
    # Every sentence within reach of the best: the test is where each quote's span is read.
    wide = ExtractiveOptions(relevance_gap=30.0, min_relevance=0.0)
    answer = both.ask("How often does key rotation happen for the keys?", top_k=4, options=wide)
    assert answer.found and answer.citations
    assert {citation.index for citation in answer.citations} == {"team", "personal"}
    for citation in answer.citations:
        assert citation.index is not None
        document = both.member(citation.index).documents.get(citation.document_id)
        assert document is not None and document.source == citation.source
        assert document.content[citation.char_start : citation.char_end] == citation.quote
    assert {hit.index for hit in answer.hits} == {"team", "personal"}


def test_a_request_every_member_refuses_alike_is_the_request_s_error(both: Federation) -> None:
    with pytest.raises(GraphNotBuilt):  # no member has an entity graph: a 409, not a 503
        both.search("key rotation", mode="graph")
    with pytest.raises(ConfigError, match="lone surrogate"):
        both.search("key \ud800 rotation")


def test_ask_refuses_graph_context_over_a_federation(both: Federation) -> None:
    with pytest.raises(ConfigError, match="each member of a federation has its own"):
        both.ask("key rotation?", graph_context=True)


def test_a_member_refusing_the_filter_is_left_out_with_a_warning_or_fails_strict(
    team: Path, personal: str
) -> None:
    refusing = FieldRefusingIndex(personal, "year", create=False, read_only=True)
    with Index(team, read_only=True, create=False) as plain, refusing:
        members = [("team", plain), ("personal", refusing)]
        partial = Federation(members, timeout=30)
        found = partial.search("key rotation", where="year >= 2024")
        assert [hit.index for hit in found.hits] == ["team"]
        assert found.failed.keys() == {"personal"}
        (warning,) = found.warnings
        assert "index personal cannot apply the filter" in warning
        assert "cannot filter on 'year'" in warning
        # A filter it can apply: both answer.
        assert {h.index for h in partial.search("key rotation", where="team exists").hits} == {
            "team"
        }
        strict = Federation(members, timeout=30, strict=True)
        with pytest.raises(UnsupportedFilter, match=r"index personal: .*cannot filter on 'year'"):
            strict.search("key rotation", where="year >= 2024")
        assert strict.search("key rotation").warnings == ()
        partial.close()
        strict.close()


def test_a_stopped_postgres_member_gives_partial_results_and_a_warning(
    tmp_path: Path,
) -> None:
    server = start_server("rwfed")
    try:
        url = build_personal(create_database(server))
        team_dir = build_team(tmp_path / "team")
        with (
            Federation.open([f"team={team_dir}", f"personal={url}"], timeout=1.0) as partial,
            Federation.open(
                [f"team={team_dir}", f"personal={url}"], timeout=1.0, strict=True
            ) as strict,
        ):
            assert {h.index for h in partial.search("key rotation").hits} == {"team", "personal"}
            server.cleanup()  # the PostgreSQL server stops
            found = partial.search("key rotation")
            assert found.hits and {hit.index for hit in found.hits} == {"team"}
            assert found.answered == ("team",)
            (warning,) = found.warnings
            assert warning.startswith("index personal is left out of these results")
            with pytest.raises(MemberUnavailable, match="strict mode refuses partial") as raised:
                strict.search("key rotation")
            assert set(raised.value.failures) == {"personal"}
            answer = partial.ask("How often does key rotation happen?")
            assert {c.index for c in answer.citations} == {"team"}
            assert any("index personal is left out" in note for note in answer.warnings)
    finally:
        server.cleanup()


def test_a_member_that_cannot_be_opened_is_reported_at_each_search(
    team: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    with Federation.open([f"team={team}", f"gone={missing}"], timeout=30) as federation:
        found = federation.search("key rotation")
        assert {hit.index for hit in found.hits} == {"team"}
        assert found.failed.keys() == {"gone"} and "index gone is left out" in found.warnings[0]
    with pytest.raises(MemberUnavailable, match="index gone"):
        Federation.open([f"team={team}", f"gone={missing}"], strict=True)


def test_no_member_answering_is_an_error_even_when_partial_is_allowed(tmp_path: Path) -> None:
    with pytest.raises(MemberUnavailable, match="no member of the federation answered"):
        Federation.open([str(tmp_path / "a"), str(tmp_path / "b")])


def test_member_specs_name_members_and_refuse_clashes() -> None:
    assert MemberSpec.parse("team=./kb") == MemberSpec("team", "./kb")
    url = "postgresql://me@db/notes?sslmode=require"
    assert MemberSpec.parse(url) == MemberSpec("notes", url)
    assert MemberSpec.parse("work=" + url) == MemberSpec("work", url)
    assert MemberSpec.parse("/srv/product/.ragwright").name == "product"
    assert MemberSpec.parse("/srv/a=b/index").location == "/srv/a=b/index"
    with pytest.raises(ConfigError, match="two federation members are named 'kb'"):
        Federation.open(["/x/kb", "/y/kb"])


def test_the_federation_table_is_read_and_checked() -> None:
    config = Config(
        {
            "federation": {
                "members": ["team=/srv/team", {"name": "p", "index": "/srv/p", "collection": "c"}],
                "timeout": 2,
                "strict": True,
            }
        }
    )
    settings = FederationSettings.from_config(config)
    assert settings.members == (MemberSpec("team", "/srv/team"), MemberSpec("p", "/srv/p", "c"))
    assert (settings.timeout, settings.strict, settings.configured) == (2.0, True, True)
    assert not FederationSettings.from_config(Config()).configured
    for table, message in (
        ({"members": "a"}, "members must be a list"),
        ({"timeout": 0}, "timeout must be above 0"),
        ({"strict": "yes"}, "strict must be true or false"),
        ({"members": [{"name": "x"}]}, "needs index"),
        ({"members": [{"index": "/a", "color": "red"}]}, "unknown key 'color'"),
        ({"member": []}, "unknown setting 'member'"),
    ):
        with pytest.raises(ConfigError, match=message):
            FederationSettings.from_config(Config({"federation": table}))
