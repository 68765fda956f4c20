"""The sync-checkpoint conformance suite (`ports.SourceCheckpoints`), for every store.

A store's test class subclasses `CheckpointContract` and provides ``checkpoints``: the store
opened on a fresh collection, and ``reopen``: the same collection opened again (another
process's view, so nothing is served from memory)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragwright.ports import Checkpoint, ItemRecord, SourceCheckpoints


def record(version: str, at: float = 1.0, state: str = "") -> ItemRecord:
    return ItemRecord(version, f"https://example.test/{version}", state, at)


class CheckpointContract:
    """Inherit and provide the ``checkpoints`` and ``reopen`` fixtures."""

    @pytest.fixture
    def checkpoints(self) -> Any:
        raise NotImplementedError("a store's test class provides checkpoints")

    @pytest.fixture
    def reopen(self) -> Callable[[], Any]:
        raise NotImplementedError("a store's test class provides reopen")

    def test_an_unknown_source_has_an_empty_checkpoint(
        self, checkpoints: SourceCheckpoints
    ) -> None:
        assert checkpoints.checkpoint("never") == Checkpoint()
        assert checkpoints.drop_checkpoint("never") == 0

    def test_recorded_items_and_cursor_are_read_back_by_another_opener(
        self, checkpoints: SourceCheckpoints, reopen: Callable[[], SourceCheckpoints]
    ) -> None:
        checkpoints.record_items("site", [("a", record("1", 5.0, '{"links": []}'))], [])
        checkpoints.record_items("site", [("b", record("2"))], [])
        checkpoints.set_cursor("site", "2026-01-01T00:00:00Z", 9.5)
        found = reopen().checkpoint("site")
        assert found.cursor == "2026-01-01T00:00:00Z"
        assert found.last_run == 9.5
        assert dict(found.items) == {"a": record("1", 5.0, '{"links": []}'), "b": record("2")}

    def test_a_new_version_replaces_the_old_and_removed_keys_are_forgotten(
        self, checkpoints: SourceCheckpoints
    ) -> None:
        checkpoints.record_items("s3", [("a", record("1")), ("b", record("1"))], [])
        checkpoints.record_items("s3", [("a", record("2", 3.0))], ["b"])
        assert dict(checkpoints.checkpoint("s3").items) == {"a": record("2", 3.0)}

    def test_sources_are_apart_and_a_drop_forgets_one(self, checkpoints: SourceCheckpoints) -> None:
        checkpoints.record_items("one", [("k", record("1"))], [])
        checkpoints.record_items("two", [("k", record("9"))], [])
        checkpoints.set_cursor("one", None, 1.0)
        assert checkpoints.drop_checkpoint("one") == 1
        assert checkpoints.checkpoint("one") == Checkpoint()
        assert dict(checkpoints.checkpoint("two").items) == {"k": record("9")}

    def test_a_cursor_can_be_cleared(self, checkpoints: SourceCheckpoints) -> None:
        checkpoints.set_cursor("api", "w1", 1.0)
        checkpoints.set_cursor("api", None, 2.0)
        found = checkpoints.checkpoint("api")
        assert (found.cursor, found.last_run) == (None, 2.0)

    def test_the_documents_another_source_holds_are_named_with_it(
        self, checkpoints: SourceCheckpoints
    ) -> None:
        assert checkpoints.claimed_by_others("b", ["https://example.test/1"]) == {}
        checkpoints.record_items("a", [("k1", record("1")), ("k2", record("2"))], [])
        checkpoints.record_items("b", [("k3", record("3"))], [])
        found = checkpoints.claimed_by_others(
            "b", ["https://example.test/1", "https://example.test/3", "https://example.test/9"]
        )
        assert found == {"https://example.test/1": "a"}
        assert checkpoints.claimed_by_others("a", ["https://example.test/1"]) == {}
