"""Every extractor is created the same way, built-in or plugin: the registry hands a factory's
``from_context`` the index's configuration, its boundary key and (opened only when asked) its
LLM session; without an index, an extractor that needs a session is a typed error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragwright import Index
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.graph.registry import create_extractor, extractor_names
from ragwright.models import Document
from ragwright.testing import HashingEmbedder

PLUGIN = '''
from ragwright.graph.extractors.rules import RuleExtractor

CREATED = []


class ContextExtractor:
    """The rules extractor under another id, recording the context it was made with."""

    id = "with-context:1"

    def __init__(self, seen):
        self.seen = seen
        self._rules = RuleExtractor()

    @classmethod
    def from_context(cls, context, argument):
        made = cls((context.config.data, context.boundary_key(), argument))
        CREATED.append(made)
        return made

    def extract(self, chunks):
        return [
            type(facts)(facts.chunk_id, self.id, facts.mentions, facts.relations)
            for facts in self._rules.extract(chunks)
        ]
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """A third-party extractor, installed as one would be: a module and its dist-info."""
    site = tmp_path / "site"
    dist = site / "context_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "context_plugin.py").write_text(PLUGIN, "utf-8")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: context-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[ragwright.extractors]\nwith-context = context_plugin:ContextExtractor\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "context_plugin", raising=False)
    import context_plugin  # type: ignore[import-not-found]

    return context_plugin


def test_a_plugin_extractor_gets_the_index_context(tmp_path: Path, plugin: object) -> None:
    config = Config({"graph": {"llm": {"workers": 2}}})
    assert "with-context" in extractor_names()
    with Index(tmp_path / "kb", embedder=HashingEmbedder(), config=config) as index:
        text = "Ada Quill was born in Brennick."
        assert index.ingestion.documents([Document.from_text("a.txt", text)]).ok
        report = index.graph.build("with-context:deep")
        made = plugin.CREATED  # type: ignore[attr-defined]
        assert len(made) == 1
        assert made[0].seen == (config.data, index.llms.records.boundary_key(), "deep")
        assert report.chunks_extracted == 1
        assert index.graph.stats().extracted == {"with-context:1": 1}
        assert index.graph.entity("Ada Quill") is not None
        assert index.llms.ledger() == []  # it never asked for a session: none was opened
        assert index.graph.extractor == "with-context:deep"  # recorded, as a built-in's name is


def test_without_an_index_the_llm_extractor_is_a_typed_error_saying_what_to_do() -> None:
    with pytest.raises(ConfigError, match="needs an index's LLM session"):
        create_extractor("llm")
    with pytest.raises(ConfigError, match="takes no argument"):
        create_extractor("llm:gpt-x")
