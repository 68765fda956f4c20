"""A chunk read from SQLite decodes its metadata at the first look, and is then the same as a
chunk whose metadata was decoded at once."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from ragwright.errors import StoreError
from ragwright.models import Chunk
from ragwright.stores.json_metadata import JSONMetadata
from ragwright.stores.rows import chunk_from_row, dump_json

TEXT = json.dumps({"title": "Zinc", "heading_path": ["A", "B"], "year": 2019, "n": None})


def test_reads_like_the_eagerly_decoded_mapping() -> None:
    lazy, eager = JSONMetadata(TEXT), MappingProxyType(json.loads(TEXT))
    assert lazy == eager and eager == lazy and lazy == dict(eager)
    assert list(lazy) == list(eager) and len(lazy) == len(eager)
    assert lazy["heading_path"] == ["A", "B"] and lazy.get("year") == 2019
    assert lazy.get("n", "default") is None and lazy.get("missing", 7) == 7
    assert "title" in lazy and "missing" not in lazy
    assert dict(lazy.items()) == dict(eager.items())
    with pytest.raises(KeyError):
        lazy["missing"]
    assert lazy != JSONMetadata('{"title": "Iron"}') and lazy != {"title": "Zinc"}
    assert JSONMetadata(TEXT) == JSONMetadata(TEXT)


def test_a_chunk_row_equals_the_chunk_built_eagerly() -> None:
    row = ("c1", "d1", 0, "text", 0, 4, TEXT)
    chunk = chunk_from_row(row)
    assert isinstance(chunk.metadata, JSONMetadata)
    eager = Chunk("c1", "d1", 0, "text", 0, 4, MappingProxyType(json.loads(TEXT)))
    assert chunk == eager
    assert chunk.metadata["title"] == "Zinc"
    assert json.loads(dump_json(chunk.metadata, "doc")) == json.loads(TEXT)


def test_read_only_and_unhashable() -> None:
    lazy = JSONMetadata(TEXT)
    with pytest.raises(TypeError):
        lazy["title"] = "Iron"  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(lazy)


def test_text_that_is_not_an_object_is_a_store_error_when_read() -> None:
    with pytest.raises(StoreError, match="not a JSON object"):
        JSONMetadata("[1, 2]").get("title")
