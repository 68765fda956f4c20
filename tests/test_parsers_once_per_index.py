"""An index reads the installed parsers' entry points once per parser options, not once per
ingest run (~40 ms each, spent before the run's first file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragwright.index import Index
from ragwright.parsers.options import ParserOptions
from ragwright.parsers.registry import ParserRegistry
from ragwright.testing import HashingEmbedder


def test_the_parsers_are_made_once_per_index_and_parser_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[ParserOptions | None] = []
    from_entry_points = ParserRegistry.from_entry_points.__func__  # type: ignore[attr-defined]

    def counted(cls: type[ParserRegistry], *args: Any, **kwargs: Any) -> ParserRegistry:
        made.append(kwargs.get("options"))
        return from_entry_points(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(ParserRegistry, "from_entry_points", classmethod(counted))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.json").write_text('{"body": "first words", "tag": "x"}')
    fields = ParserOptions(text_fields=("body",))
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as kb:
        kb.ingest([docs])
        kb.ingest([docs])
        assert len(made) == 1
        kb.ingest([docs], parser_options=fields)  # other options: other parsers
        assert kb.documents.get("docs/a.json").content == "first words"  # type: ignore[union-attr]
        kb.ingest([docs], parser_options=fields)
    assert made == [ParserOptions(), fields]
