"""Communities, reports and global search through the `Index`: re-clustering is explicit,
reports follow deletes, offline global search cites exact chunk spans."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from global_corpus import MUSIC, SPACE, THEMES, write_corpus
from ragwright import Index
from ragwright.errors import GraphNotBuilt, UnsupportedFilter, UnsupportedScale
from ragwright.graph.global_search import is_yes_no
from ragwright.graph.reports import ExtractiveReporter
from ragwright.models import Arm
from ragwright.models.communities import CommunitySettings
from ragwright.testing import HashingEmbedder

SETTINGS = CommunitySettings(min_mentions=1)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[Index]:
    docs = write_corpus(tmp_path / "docs")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index:
        index.ingest(docs, base=tmp_path, extractor="capitalized")
        yield index


@pytest.fixture
def clustered(kb: Index) -> Index:
    kb.communities.build(SETTINGS)
    return kb


def _community_of(index: Index, key: str) -> int:
    return next(c.community.id for c in index.communities.list(0) if key in c.community.members)


def test_each_theme_is_a_community_and_the_build_is_stored(clustered: Index) -> None:
    members = [set(c.community.members) for c in clustered.communities.list(level=0)]
    assert any(m >= SPACE for m in members) and any(m >= MUSIC for m in members)
    assert len(members) == 3
    build = clustered.communities.build_stats()
    assert build is not None and build.settings == SETTINGS
    assert [(lvl.communities, lvl.disconnected, lvl.singletons) for lvl in build.levels] == [
        (3, 0, 0)
    ]
    assert 0 < build.levels[0].largest_share < 0.5 and build.levels[0].modularity > 0.5


def test_ingest_never_reclusters(clustered: Index, tmp_path: Path) -> None:
    before = clustered.communities.list()
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "rome.md").write_text("Julius Caesar ruled Rome. Julius Caesar left Rome.\n", "utf-8")
    clustered.ingest(extra, base=tmp_path, extractor="capitalized")
    assert [c.community for c in clustered.communities.list()] == [c.community for c in before]
    # A rebuild without settings reuses the stored ones, and now clusters the new entities.
    clustered.communities.build()
    assert any("rome" in c.community.members for c in clustered.communities.list())
    assert clustered.communities.build_stats().settings == SETTINGS  # type: ignore[union-attr]


def test_extractive_reports_quote_exact_spans_of_member_chunks(clustered: Index) -> None:
    reports = clustered.communities.workflow().extractive_reports()
    assert len(reports) == 3
    for stored in reports:
        report = stored.report
        assert report.title and report.terms and report.points and not stored.dirty
        for point in report.points:
            chunk = clustered.documents.chunk(point.chunk_id)
            assert chunk is not None and chunk.text[point.start : point.end] == point.text
    music = next(
        s.report for s in reports if s.report.community == _community_of(clustered, "beatles")
    )
    assert {"liverpool", "the beatles", "john lennon"} & {
        w.casefold() for w in music.title.split(", ")
    }


def test_reports_made_another_way_are_made_again_on_use(clustered: Index) -> None:
    workflow = clustered.communities.workflow()
    made = {s.report.community: s.report for s in workflow.extractive_reports()}
    assert len({r.recipe for r in made.values()}) == 1 and "" not in {
        r.recipe for r in made.values()
    }
    # Other settings (or a newer ragwright's reporter): every report is made again.
    fewer = workflow.extractive_reports(ExtractiveReporter(max_points=3, per_chunk=1))
    assert all(s.report.recipe != made[s.report.community].recipe for s in fewer)
    assert all(len({p.chunk_id for p in s.report.points}) == len(s.report.points) for s in fewer)
    # A report stored by an older ragwright (no recipe; its input hash had the older
    # reporter's version in it) is made again too, not kept.
    old = made[0]
    stale = dataclasses.replace(old, recipe="", title="stale title", input_hash="older")
    workflow.store.write_reports([(stale, b"")], workflow.version)
    again = {s.report.community: s.report for s in workflow.extractive_reports()}
    assert again[0].title != "stale title" and again[0] == old


def test_deleting_a_document_marks_exactly_its_communities_and_its_text_never_survives(
    clustered: Index,
) -> None:
    workflow = clustered.communities.workflow()
    before = {s.report.community: s.report for s in workflow.extractive_reports()}
    music, space = _community_of(clustered, "beatles"), _community_of(clustered, "nasa")
    document = clustered.documents.get("docs/music.md")
    assert document is not None
    gone = {c.id for c in clustered.documents.chunks_of(document.id)}
    assert clustered.documents.delete("docs/music.md")
    assert {c.community.id for c in clustered.communities.list() if c.dirty} == {music}
    stored = workflow.store.community_reports("extractive")
    assert {s.report.community for s in stored if s.dirty} == {music}
    after = {s.report.community: s for s in workflow.extractive_reports()}  # regenerated on use
    assert not any(s.dirty for s in after.values())
    music_words = set(THEMES["music.md"].split()) - set(THEMES["space.md"].split())
    for stored_report in after.values():
        report = stored_report.report
        assert not gone & {p.chunk_id for p in report.points}
        assert not gone & set(report.chunk_ids)
        assert not any(word in report.text.split() for word in music_words if word.istitle())
    assert (
        after[music].report.points == ()
        and after[music].report.input_hash != before[music].input_hash
    )
    assert after[space].report == before[space]  # untouched: kept, not made again
    hits = clustered.search("Beatles songs in Liverpool", mode="global")
    assert not gone & {hit.chunk.id for hit in hits}


def test_global_search_returns_the_chunks_the_chosen_reports_cite(clustered: Index) -> None:
    hits = clustered.search("Beatles songs in Liverpool", mode="global", top_k=2)
    assert [hit.source for hit in hits][:1] == ["docs/music.md"]
    assert all(hit.arms == frozenset({Arm.GLOBAL}) for hit in hits)
    assert [hit.rank for hit in hits] == list(range(1, len(hits) + 1)) and len(hits) <= 2


def test_a_theme_question_covers_every_community(clustered: Index) -> None:
    answer = clustered.ask("What are the main themes?", mode="global")
    sources = {citation.source for citation in answer.citations}
    assert sources == {"docs/space.md", "docs/music.md", "docs/cooking.md"}
    spans = [(c.document_id, c.char_start, c.char_end) for c in answer.citations]
    assert len(spans) == len(set(spans))  # no span cited twice


def test_global_answers_cite_exact_document_spans(clustered: Index) -> None:
    answer = clustered.ask("What happened in Liverpool?", mode="global")
    assert answer.found and answer.engine == "global" and answer.citations
    assert "[1]" in answer.text and answer.warnings == ()
    for citation in answer.citations:
        document = clustered.documents.get(citation.document_id)
        assert document is not None
        assert document.content[citation.char_start : citation.char_end] == citation.quote
    assert answer.citations[0].source == "docs/music.md"


def test_a_yes_no_question_is_flagged(clustered: Index) -> None:
    answer = clustered.ask("Did the Beatles form in Liverpool?", mode="global")
    assert any("yes/no" in warning for warning in answer.warnings)
    assert is_yes_no("Is Paris in France?") and not is_yes_no("Which cities appear?")


def test_global_mode_refuses_a_filter_and_needs_communities(kb: Index) -> None:
    with pytest.raises(GraphNotBuilt, match="ragwright graph communities"):
        kb.search("anything", mode="global")
    with pytest.raises(GraphNotBuilt):
        kb.ask("anything", mode="global")
    kb.communities.build(SETTINGS)
    with pytest.raises(UnsupportedFilter):
        kb.search("anything", mode="global", where='source = "docs/music.md"')
    with pytest.raises(UnsupportedScale):
        kb.search("anything", mode="global", min_score=0.5)


def test_an_empty_graph_cannot_be_clustered(tmp_path: Path) -> None:
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as index, pytest.raises(GraphNotBuilt):
        index.communities.build()


def test_a_read_only_index_makes_dirty_reports_in_memory_and_writes_nothing(
    clustered: Index, tmp_path: Path
) -> None:
    music = _community_of(clustered, "beatles")
    assert clustered.documents.delete("docs/music.md")
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), read_only=True) as reader:
        hits = reader.search("Beatles songs in Liverpool", mode="global")
        assert hits and all(hit.source != "docs/music.md" for hit in hits)
        assert not any(s.dirty for s in reader.communities.workflow().extractive_reports())
    stored = clustered.communities.workflow().store.community_reports("extractive")
    assert {s.report.community for s in stored if s.dirty} == {music}  # nothing written


def test_a_hard_wrapped_sentence_reads_as_one_line_and_is_cited_exactly(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    wrapped = (
        "John Lennon met Paul McCartney in Liverpool, where\n"
        "The Beatles formed with Paul McCartney and John Lennon.\n"
    )
    (docs / "music.md").write_text(wrapped, "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        kb.ingest(docs, base=tmp_path, extractor="capitalized")
        kb.communities.build(SETTINGS)
        answer = kb.ask("What happened in Liverpool?", mode="global")
    assert answer.found and answer.citations
    assert all(line.startswith("- ") for line in answer.text.splitlines()[1:])
    assert "Liverpool, where The Beatles formed" in answer.text
    assert answer.citations[0].quote == wrapped.strip()  # the exact span, line break and all
