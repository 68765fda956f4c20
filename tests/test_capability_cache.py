"""What ``mode="auto"`` can run is cached by the graph and community versions: the build record
is read again only when a version moved, and a build made by another `Index` on the same
directory (another process) is seen at the next plan."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from global_corpus import write_corpus
from ragwright import Index
from ragwright.config import Config
from ragwright.models.communities import (
    CommunityBuild,
    CommunityReport,
    CommunitySettings,
    StoredCommunity,
    StoredReport,
)
from ragwright.planner import Capabilities
from ragwright.planner.capabilities import CapabilityCache
from ragwright.testing import HashingEmbedder

THEMES_QUESTION = "What are the main themes of these notes?"


class CountingCommunities:
    """A `CommunityStore` fake that counts reads of its build record."""

    def __init__(self, build: CommunityBuild | None) -> None:
        self.build = build
        self.version = 1
        self.build_reads = 0

    def replace_communities(self, build: CommunityBuild) -> None:
        self.build, self.version = build, self.version + 1

    def community_build(self) -> CommunityBuild | None:
        self.build_reads += 1
        return self.build

    def community_version(self) -> str:
        return f"0:{self.version}"

    def communities(self, level: int | None = None) -> list[StoredCommunity]:
        return []

    def community_reports(self, kind: str) -> list[StoredReport]:
        return []

    def write_reports(
        self, reports: Sequence[tuple[CommunityReport, bytes]], graph_version: str
    ) -> int:
        return 0


def _empty_build() -> CommunityBuild:
    return CommunityBuild("0", CommunitySettings(), (), (), clustered=0, unclustered=0, seconds=0)


def test_the_build_record_is_read_once_per_community_version() -> None:
    store = CountingCommunities(None)
    cache = CapabilityCache(None, store)
    assert [cache.current() for _ in range(5)] == [Capabilities()] * 5
    assert store.build_reads == 1
    store.replace_communities(_empty_build())  # the version moves
    assert cache.current() == Capabilities(global_search=True)
    assert cache.current() == Capabilities(global_search=True)
    assert store.build_reads == 2


def test_auto_sees_communities_built_here_and_by_another_index(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    to_global = Config({"planner": {"aggregate_mode": "global"}})
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=to_global) as writer:
        writer.ingest(docs, base=tmp_path, extractor="capitalized")
        with Index(
            tmp_path / "kb", embedder=HashingEmbedder(), create=False, config=to_global
        ) as reader:
            before = reader.plan(THEMES_QUESTION)
            assert (before.mode, before.planned) == ("hybrid", "global")
            assert "no global search" in before.reason
            assert writer.plan(THEMES_QUESTION).mode == "hybrid"
            writer.build_communities(CommunitySettings(min_mentions=1))
            assert writer.plan(THEMES_QUESTION).mode == "global"
            assert reader.plan(THEMES_QUESTION).mode == "global"  # another writer's build
            hits = reader.search(THEMES_QUESTION, mode="auto")
            assert hits and {hit.source for hit in hits} >= {"docs/music.md", "docs/space.md"}
