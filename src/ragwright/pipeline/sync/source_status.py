"""Where each sync source stands, for ``ragwright sync list``, ``GET /v1/sync`` and the web page.

The checkpoint says what is committed (items, cursor, when the last run ended); what the last
run could not do (its failed items, which stay pending until a later run syncs them, and
whether its listing was complete) is kept beside it as the index setting
``sync_run.NAME``, written after each run, so another process (a server) can show it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Protocol

from ragwright.pipeline.ingest.ingestor import Failure
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.ports import Checkpoint

#: Failures kept per source (the count is always exact).
MAX_FAILURES = 50


class RunRecords(Protocol):
    def get_setting(self, key: str) -> str | None: ...

    def set_setting(self, key: str, value: str) -> None: ...


@dataclass(frozen=True, slots=True)
class SourceState:
    """One source: its ``type``; ``items`` committed and ``cursor`` from its checkpoint, and
    ``cursor_age`` (seconds, at ``now``, since a run last advanced the cursor: only a run
    without failures does); of the last run: when it ended (``last_run``, Unix seconds; None
    before the first), ``complete`` (its listing covered everything, so it could prune),
    ``failed`` (how many items failed: they are retried, so pending) and the first
    `MAX_FAILURES` of them with their reasons."""

    name: str
    type: str
    items: int
    cursor: str | None
    last_run: float | None
    cursor_age: float | None
    complete: bool | None
    failed: int
    failures: tuple[Failure, ...]


def record_run(records: RunRecords, name: str, report: SyncReport) -> None:
    """Keep what the run ``report`` could not do, for the status surfaces."""
    kept = [{"source": f.source, "reason": f.reason} for f in report.failed[:MAX_FAILURES]]
    value = {
        "at": time.time(),
        "complete": report.complete,
        "failed": len(report.failed),
        "failures": kept,
    }
    records.set_setting(_key(name), json.dumps(value, sort_keys=True))


def source_state(
    records: RunRecords, name: str, kind: str, checkpoint: Checkpoint, now: float | None = None
) -> SourceState:
    raw = records.get_setting(_key(name))
    run = json.loads(raw) if raw else {}
    advanced = checkpoint.last_run
    now = time.time() if now is None else now
    age = None if advanced is None else max(0.0, now - advanced)
    failures = tuple(Failure(f["source"], f["reason"]) for f in run.get("failures", ()))
    return SourceState(
        name,
        kind,
        len(checkpoint.items),
        checkpoint.cursor,
        run.get("at", advanced),
        age,
        run.get("complete"),
        int(run.get("failed", 0)),
        failures,
    )


def forget_run(records: RunRecords, name: str) -> None:
    records.set_setting(_key(name), "")


def _key(name: str) -> str:
    return f"sync_run.{name}"


__all__ = ["SourceState", "forget_run", "record_run", "source_state"]
