"""The community conformance suite: every store that keeps communities (`CommunityStore`)
passes it. A store's test class subclasses `CommunityContract` and provides ``open_store`` as
for `ragwright.testing.graph_contract.GraphContract`; the graph is `GRAPH_CORPUS`'s, and the
communities are given by hand, so which of them a change touches is known exactly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from ragwright.models.communities import (
    Community,
    CommunityBuild,
    CommunityReport,
    CommunitySettings,
    LevelStats,
    ReportPoint,
)
from ragwright.testing.graph_contract import graph_write, load_graph
from ragwright.testing.store_contract import SPACE, make_document

#: Level 0: the politicians and Berlin (0), the IBM lab (1), Paris (2); level 1 splits 0.
COMMUNITIES = (
    Community(0, 0, None, ("angela merkel", "barack obama", "berlin", "obama")),
    Community(1, 0, None, ("i.b.m", "ibm", "zurich")),
    Community(2, 0, None, ("paris",)),
    Community(3, 1, 0, ("barack obama", "obama")),
    Community(4, 1, 0, ("angela merkel", "berlin")),
)


def community_build(graph_version: str = "1") -> CommunityBuild:
    return CommunityBuild(
        graph_version=graph_version,
        settings=CommunitySettings(max_cluster_size=3),
        communities=COMMUNITIES,
        levels=(
            LevelStats(0, 3, 8, 4, 1, 0, 0, 0.25),
            LevelStats(1, 2, 4, 2, 0, 0, 1, 0.125),
        ),
        clustered=8,
        unclustered=0,
        seconds=0.5,
    )


def report(community: int, kind: str = "extractive", title: str = "") -> CommunityReport:
    return CommunityReport(
        community=community,
        kind=kind,
        title=title or f"community {community}",
        terms=("a", "b"),
        points=(ReportPoint("Obama flew home", "chunk-1", 0, 15, 0.5),),
        input_hash=f"hash-{community}-{kind}",
        summary="summary",
        chunk_ids=("chunk-1",),
    )


VECTOR = np.arange(4, dtype=np.float32).tobytes()


class CommunityContract:
    """Inherit and provide the ``open_store`` fixture."""

    @pytest.fixture
    def open_store(self) -> Callable[[], Any]:
        raise NotImplementedError("a store's test class provides open_store")

    @pytest.fixture
    def store(self, open_store: Callable[[], Any]) -> Iterator[Any]:
        store = open_store()
        store.bind_space(SPACE)
        load_graph(store)
        yield store
        store.close()

    @pytest.fixture
    def clustered(self, store: Any) -> Any:
        store.replace_communities(community_build(store.graph_version()))
        return store

    def test_nothing_is_stored_before_the_first_build(self, store: Any) -> None:
        assert store.community_build() is None
        assert store.communities() == []
        assert store.community_reports("extractive") == []

    def test_communities_and_their_stats_read_back(self, clustered: Any) -> None:
        stored = clustered.communities()
        assert [s.community for s in stored] == list(COMMUNITIES)
        assert not any(s.dirty for s in stored)
        assert [s.community.id for s in clustered.communities(level=1)] == [3, 4]
        assert clustered.communities(level=7) == []
        build = clustered.community_build()
        expected = community_build(clustered.graph_version())
        assert build.levels == expected.levels
        assert build.settings == expected.settings
        assert (build.clustered, build.unclustered, build.graph_version) == (
            8,
            0,
            expected.graph_version,
        )

    def test_reports_read_back_by_kind(self, clustered: Any) -> None:
        version = clustered.graph_version()
        written = clustered.write_reports(
            [(report(0), VECTOR), (report(1), VECTOR), (report(0, "llm"), VECTOR)], version
        )
        assert written == 3
        extractive = clustered.community_reports("extractive")
        assert [s.report for s in extractive] == [report(0), report(1)]
        assert all(s.vector == VECTOR and not s.dirty for s in extractive)
        assert [s.report for s in clustered.community_reports("llm")] == [report(0, "llm")]

    def test_a_report_replaces_its_communitys_report_of_that_kind(self, clustered: Any) -> None:
        version = clustered.graph_version()
        clustered.write_reports([(report(2), VECTOR)], version)
        clustered.write_reports([(report(2, title="again"), VECTOR)], version)
        assert [s.report.title for s in clustered.community_reports("extractive")] == ["again"]

    def test_a_report_for_a_community_not_stored_is_not_written(self, clustered: Any) -> None:
        assert clustered.write_reports([(report(99), VECTOR)], clustered.graph_version()) == 0
        assert clustered.community_reports("extractive") == []

    def test_a_report_made_from_an_older_graph_is_stored_dirty(self, clustered: Any) -> None:
        version = clustered.graph_version()
        clustered.write([graph_write("berlin.md", ["Berlin is big."])])
        clustered.write_reports([(report(1), VECTOR)], version)
        assert [s.dirty for s in clustered.community_reports("extractive")] == [True]

    def test_a_rebuild_replaces_every_community_and_report(self, clustered: Any) -> None:
        clustered.write_reports([(report(0), VECTOR)], clustered.graph_version())
        smaller = community_build(clustered.graph_version())
        only = (Community(0, 0, None, ("paris",)),)
        clustered.replace_communities(
            CommunityBuild(
                smaller.graph_version,
                smaller.settings,
                only,
                smaller.levels[:1],
                1,
                7,
                0.1,
            )
        )
        assert [s.community for s in clustered.communities()] == list(only)
        assert clustered.community_reports("extractive") == []
        assert clustered.community_build().unclustered == 7

    def test_deleting_a_document_marks_exactly_the_affected_communities_dirty(
        self, clustered: Any
    ) -> None:
        version = clustered.graph_version()
        clustered.write_reports(
            [(report(c.id), VECTOR) for c in COMMUNITIES]
            + [(report(c.id, "llm"), VECTOR) for c in COMMUNITIES],
            version,
        )
        ibm = make_document(
            "ibm.md", ["IBM opened a lab in Zurich.", "The I.B.M. lab in Zurich grew."]
        )
        assert clustered.delete_many([ibm[0].id]) == 1
        dirty = {s.community.id for s in clustered.communities() if s.dirty}
        assert dirty == {1}
        for kind in ("extractive", "llm"):
            reports = clustered.community_reports(kind)
            assert {s.report.community for s in reports if s.dirty} == {1}

    def test_a_delete_touching_a_nested_community_marks_it_and_its_parent(
        self, clustered: Any
    ) -> None:
        paris = make_document("paris.md", ["Angela Merkel visited Paris."])[0]
        clustered.delete_many([paris.id])
        assert {s.community.id for s in clustered.communities() if s.dirty} == {0, 2, 4}

    def test_a_new_document_naming_a_member_marks_its_communities(self, clustered: Any) -> None:
        clustered.write([graph_write("zurich.md", ["Zurich has a lake."])])
        assert {s.community.id for s in clustered.communities() if s.dirty} == {1}

    def test_the_community_version_changes_with_every_write_and_delete(self, store: Any) -> None:
        seen = [store.community_version()]
        store.replace_communities(community_build(store.graph_version()))
        seen.append(store.community_version())
        store.write_reports([(report(0), VECTOR)], store.graph_version())
        seen.append(store.community_version())
        assert store.community_version() == seen[-1]  # reading changes nothing
        paris = make_document("paris.md", ["Angela Merkel visited Paris."])[0]
        store.delete_many([paris.id])
        seen.append(store.community_version())
        assert len(set(seen)) == 4

    def test_a_new_document_naming_no_member_marks_nothing(self, clustered: Any) -> None:
        clustered.write([graph_write("rome.md", ["Rome is old."])])
        assert not any(s.dirty for s in clustered.communities())

    def test_a_mention_of_a_key_merged_into_a_member_marks_its_communities(
        self, store: Any
    ) -> None:
        """The graph reads ``rome`` merged with ``paris`` as one entity under ``paris``, the
        key a build lists: a mention of ``rome`` changes that entity's facts."""
        store.write([graph_write("rome.md", ["Rome is old."])])
        store.merge_entities("paris", "rome")
        store.replace_communities(community_build(store.graph_version()))
        store.write([graph_write("more-rome.md", ["Rome is sunny."])])
        assert {s.community.id for s in store.communities() if s.dirty} == {2}
        store.replace_communities(community_build(store.graph_version()))
        rome = make_document("rome.md", ["Rome is old."])[0]
        assert store.delete_many([rome.id]) == 1
        assert {s.community.id for s in store.communities() if s.dirty} == {2}
        # A rebuild after an unmerge lists no alias: rome is its own entity again.
        store.unmerge_entities("paris", "rome")
        store.replace_communities(community_build(store.graph_version()))
        store.write([graph_write("rome-again.md", ["Rome is far."])])
        assert not any(s.dirty for s in store.communities())
