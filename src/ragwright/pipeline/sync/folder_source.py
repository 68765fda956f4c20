"""The file-system source: `FolderSync` (watch's change detection, moves and complete-walk
deletes) with what it saw kept in the source's checkpoint, so a later `ragwright sync run`
trusts an unchanged size and time without reading the file. A run killed midway left the
checkpoint as it was: the rerun reads the files changed since, finds what the killed run
committed unchanged (its fingerprint is stored) and writes the rest."""

from __future__ import annotations

import json
import time

from ragwright.pipeline.sync.folder_sync import FolderSync, Seen, SyncReport
from ragwright.ports import ItemRecord, SourceCheckpoints


class FolderSourceSync:
    """Syncs ``folders`` (a `FolderSync`, not yet entered) as the source ``name``."""

    def __init__(self, name: str, folders: FolderSync, checkpoints: SourceCheckpoints) -> None:
        self.name = name
        self.folders = folders
        self.checkpoints = checkpoints

    def run(self) -> SyncReport:
        started = time.time()
        recorded = self.checkpoints.checkpoint(self.name).items
        self.folders.remember_seen(
            {source: seen_from(record.version) for source, record in recorded.items()}
        )
        with self.folders:
            report = self.folders.reconcile()
        now = time.time()
        seen = {source: seen_version(s) for source, s in self.folders.seen().items()}
        changed = [
            (source, ItemRecord(version, source, "", now))
            for source, version in sorted(seen.items())
            if source not in recorded or recorded[source].version != version
        ]
        removed = sorted(source for source in recorded if source not in seen)
        self.checkpoints.record_items(self.name, changed, removed)
        self.checkpoints.set_cursor(self.name, None, started)
        return report


def seen_version(seen: Seen) -> str:
    return json.dumps([seen.size, seen.mtime_ns, seen.fingerprint, seen.trusted])


def seen_from(version: str) -> Seen:
    size, mtime_ns, fingerprint, trusted = json.loads(version)
    return Seen(int(size), int(mtime_ns), fingerprint, bool(trusted))
