"""`ragwright watch` on an index with a graph: a synced file's graph facts are written with its
chunks by the extractor the index recorded, and go with the file; an index without a graph
gets no facts from watch."""

from __future__ import annotations

from pathlib import Path

from ragwright import Index
from ragwright.testing import HashingEmbedder
from watch_helpers import settled, wait_for, watching

FIRST = "Ada Quill was born in Brennick, where she wrote her first novel.\n"
BRIDGE = "Brennick lies on the Sollen, known for its stone bridges.\n"
CHANGED = "Mount Orrin is climbed each spring by the Tessel club.\n"


def graph_of(kb: Index) -> tuple[int, int, int, int]:
    """(entities, edges, mentions, chunks) of the index's graph."""
    stats = kb.graph.stats()
    return stats.entities, stats.edges, stats.mentions, stats.chunks_total


def fresh_graph(folder: Path, location: Path) -> tuple[int, int, int, int]:
    with Index(location, embedder=HashingEmbedder()) as fresh:
        assert fresh.ingest([folder], extractor="rules").ok
        return graph_of(fresh)


def named(kb: Index, name: str) -> list[str]:
    """The sources of the chunks that mention ``name`` (empty: no such entity)."""
    entity = kb.graph.entity(name)
    return [] if entity is None else sorted({site.source for site in entity.sites})


def test_a_watched_files_entities_appear_and_disappear_with_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "first.md").write_text(FIRST, "utf-8")
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        assert kb.ingest([docs], extractor="rules").ok  # records the index's extractor
        with watching(kb, docs) as status:
            (docs / "bridge.md").write_text(BRIDGE, "utf-8")
            assert wait_for(lambda: named(kb, "Sollen") == ["docs/bridge.md"])
            assert named(kb, "Brennick") == ["docs/bridge.md", "docs/first.md"]
            assert wait_for(settled(status))
            stats = kb.graph.stats()  # written with its chunks: every chunk has its facts
            assert stats.chunks_extracted == stats.chunks_total == 2
            assert graph_of(kb) == fresh_graph(docs, tmp_path / "fresh-1")

            (docs / "bridge.md").write_text(CHANGED, "utf-8")
            assert wait_for(lambda: named(kb, "Tessel") == ["docs/bridge.md"])
            assert named(kb, "Sollen") == [] and named(kb, "Brennick") == ["docs/first.md"]

            (docs / "bridge.md").unlink()
            assert wait_for(lambda: named(kb, "Tessel") == [])
            assert wait_for(settled(status))
            assert named(kb, "Mount Orrin") == []
            assert graph_of(kb) == fresh_graph(docs, tmp_path / "fresh-2")


def test_watch_writes_no_facts_into_an_index_without_a_graph(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    with Index(tmp_path / "kb", embedder=HashingEmbedder()) as kb:
        with watching(kb, docs) as status:
            (docs / "first.md").write_text(FIRST, "utf-8")
            assert wait_for(lambda: len(kb.documents.list()) == 1)
            assert wait_for(settled(status))
        stats = kb.graph.stats()
        assert (stats.mentions, stats.chunks_extracted, stats.chunks_total) == (0, 0, 1)
