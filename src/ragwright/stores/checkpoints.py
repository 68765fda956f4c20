"""What both stores share about sync checkpoints (`ports.SourceCheckpoints`): the tables'
columns, and rows read back as records. The tables are made on the first write, so an index
that never synced a source has none, and no schema version changes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragwright.ports import Checkpoint, ItemRecord


def checkpoint_from(head: Any, rows: Iterable[Any]) -> Checkpoint:
    """A checkpoint from its head row (cursor, last run; None when there is none) and its item
    rows (key, version, document source, state, synced at)."""
    items = {
        str(key): ItemRecord(str(version), str(document), str(state), float(synced))
        for key, version, document, state, synced in rows
    }
    if head is None:
        return Checkpoint(items=items)
    cursor, last_run = head
    return Checkpoint(
        None if cursor is None else str(cursor),
        items,
        None if last_run is None else float(last_run),
    )
