"""The PostgreSQL store keeps the `SpaceRebuild` contract (``ragwright reindex``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragwright.stores.postgres import connect
from ragwright.testing.space_contract import SPACE, SpaceRebuildContract


class TestPostgresSpaces(SpaceRebuildContract):
    @pytest.fixture
    def open_again(self, pg_url: str) -> Callable[[], Any]:
        return functools.partial(connect, pg_url)

    @pytest.fixture
    def store(self, open_again: Callable[[], Any]) -> Iterator[Any]:
        opened = open_again()
        try:
            opened.bind_space(SPACE)
            yield opened
        finally:
            opened.close()
