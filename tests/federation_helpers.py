"""What the federation tests share: two small indexes on different stores and embedders, a
SQLite one ("team", hashing embedder at 128 dimensions) and a PostgreSQL one ("personal", at
320), holding different documents on the same topics, and a member that refuses a filter."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Unpack

import pytest

from pg_server import create_database, drop_database
from ragwright import Hit, Index
from ragwright.errors import UnsupportedFilter
from ragwright.filters import Filter
from ragwright.models import Document, document_id_for
from ragwright.pipeline.search.filter_fields import fields_of
from ragwright.pipeline.search.request import SearchOptions, SearchRequest
from ragwright.ports import ResultProcessor
from ragwright.query.model import QueryProcessor
from ragwright.testing import HashingEmbedder

TEAM = [
    Document(
        "",
        "team/rotation.md",
        "Key rotation happens every ninety days. The on-call engineer rotates the signing keys.",
        {"year": 2024, "team": "platform"},
    ),
    Document(
        "",
        "team/backups.md",
        "Backups run nightly at two. A restore drill happens every quarter.",
        {"year": 2022, "team": "platform"},
    ),
]
PERSONAL = [
    Document(
        "",
        "notes/keys.md",
        "My notes on key rotation: the staging keys rotate monthly, by hand.",
        {"year": 2025},
    ),
    Document(
        "",
        "notes/garden.md",
        "The tomatoes need water every morning in July.",
        {"year": 2021},
    ),
]


def documents(listed: Sequence[Document]) -> list[Document]:
    """The documents with their ids derived from their sources, as ingest names them."""
    return [Document(document_id_for(d.source), d.source, d.content, d.metadata) for d in listed]


def build_team(path: Path) -> Path:
    with Index(path, embedder=HashingEmbedder(128)) as kb:
        assert kb.ingest_documents(documents(TEAM)).ok
    return path


def build_personal(url: str) -> str:
    with Index(url, embedder=HashingEmbedder(320)) as kb:
        assert kb.ingest_documents(documents(PERSONAL)).ok
    return url


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_team(tmp_path_factory.mktemp("team") / "index")


@pytest.fixture(scope="module")
def personal(pg_server: Any) -> Iterator[str]:
    url = create_database(pg_server)
    yield build_personal(url)
    drop_database(pg_server, url)


class FieldRefusingIndex(Index):
    """A member whose store cannot filter on one metadata field (as a store without, say,
    nested JSON paths): it refuses any filter naming it, the way a store must."""

    def __init__(self, location: str | Path, field: str, **kwargs: Any) -> None:
        super().__init__(location, **kwargs)
        self.refused_field = field

    def search(
        self,
        query: str,
        request: SearchRequest | None = None,
        *,
        processors: Sequence[ResultProcessor] = (),
        query_processors: Sequence[QueryProcessor] = (),
        **options: Unpack[SearchOptions],
    ) -> list[Hit]:
        made = (request or SearchRequest()).but(**options)
        if made.where is not None and self.refused_field in _fields(made.where):
            raise UnsupportedFilter(f"this store cannot filter on {self.refused_field!r}")
        return super().search(query, made, processors=processors, query_processors=query_processors)


def _fields(where: Filter) -> set[str]:
    return set(fields_of(where))
