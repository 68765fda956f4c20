"""Keep a collection equal to what folders hold: one pass over the paths that changed (or over
the whole watched roots, a reconcile), through the ingest pipeline.

Change detection is size and modification time first, then the file's fingerprint (one read
and a hash: the same fingerprint ingest stores), so a touched file costs a hash and nothing is
parsed or embedded. A file whose fingerprint is that of a file gone in the same pass is a
rename or move: the stored document is re-keyed to the new source (`DocumentMove`) without
re-embedding. Everything else goes through `Ingestor` (its limits, parse worker and batched
writes: a changed file's new version replaces the old in one transaction).

A stored document is deleted only when its file is gone and either the path was named by a
file-system event or a walk of the folder holding it examined every entry: a walk that could
not list a folder or stat a file (a partial listing) deletes nothing.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ragwright.errors import IngestLimitExceeded, RagwrightError
from ragwright.models import document_id_for
from ragwright.pipeline.ingest.discover import Candidate, discover, source_name, source_path
from ragwright.pipeline.ingest.documents import failure_reason
from ragwright.pipeline.ingest.ingestor import Failure, Ingestor, IngestReport
from ragwright.pipeline.ingest.parse_worker import ParseWorker
from ragwright.ports import DocumentLookup, DocumentMove

#: A file modified this close to the moment it was looked at may change again within the
#: file system's timestamp granularity without its size or time changing (2 s on FAT): its
#: size and time are not trusted until a later look, which reads it again ("racy" entries).
RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class Seen:
    """A file as last synced: its size and time, and its fingerprint (None: it failed)."""

    size: int
    mtime_ns: int
    fingerprint: str | None
    trusted: bool


@dataclass
class SyncReport:
    """What one pass did. ``moved`` pairs (old source, new source); ``complete`` is False when
    a walk could not examine everything, so no file missing from it was deleted."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    hashed: int = 0
    failed: list[Failure] = field(default_factory=list)
    #: Sources synced without failing, or gone (their earlier failures are over).
    succeeded: list[str] = field(default_factory=list)
    complete: bool = True

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.moved or self.removed)


class FolderSync:
    """Syncs the files under ``roots`` into the ingestor's store. Use as a context manager
    (it holds a parse worker). ``lock`` is taken around each pass's writes (the collection's
    ingest lock); paths under ``ignore`` (the index's own directory) are never read."""

    def __init__(
        self,
        ingestor: Ingestor,
        documents: DocumentLookup,
        mover: DocumentMove | None,
        roots: Sequence[Path],
        *,
        lock: Callable[[], AbstractContextManager[None]] = nullcontext,
        ignore: Sequence[Path] = (),
    ) -> None:
        self.ingestor = ingestor
        self.documents = documents
        self.mover = mover
        self.roots = [Path(os.path.abspath(root)) for root in roots]
        self.lock = lock
        self.ignore = [
            path
            for path in (Path(os.path.abspath(p)) for p in ignore)
            if any(path == root or path.is_relative_to(root) for root in self.roots)
        ]
        self._seen: dict[str, Seen] = {}
        self._worker: ParseWorker | None = None

    def __enter__(self) -> FolderSync:
        self._worker = ParseWorker(self.ingestor.options.parse_limits).__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def seen(self) -> dict[str, Seen]:
        """The files as last synced, by source: what a checkpoint keeps between runs."""
        return dict(self._seen)

    def remember_seen(self, seen: Mapping[str, Seen]) -> None:
        """Start from files synced by an earlier run (`seen`): an unchanged size and time
        costs no read. Each entry is checked against the store's fingerprint as usual."""
        self._seen.update(seen)

    def watched(self, path: Path) -> bool:
        """Whether ``path`` is under a root, in no dot-directory nor ignored folder."""
        path = Path(os.path.abspath(path))
        if any(path == p or path.is_relative_to(p) for p in self.ignore):
            return False
        for root in self.roots:
            if path == root or path.is_relative_to(root):
                return not any(part.startswith(".") for part in path.relative_to(root).parts)
        return False

    def reconcile(self, skip: Collection[Path] = ()) -> SyncReport:
        """A pass over the whole roots, trusting unchanged sizes and times; ``skip`` names
        files being written, left for a later pass."""
        return self.sync(self.roots, skip=skip, trust_stat=True, whole=True)

    def sync(
        self,
        scopes: Iterable[Path],
        *,
        skip: Collection[Path] = (),
        trust_stat: bool = False,
        whole: bool = False,
    ) -> SyncReport:
        """A pass over ``scopes`` (files or folders that changed, or vanished). An event says
        something happened, so by default every file found is read (``trust_stat=False``)."""
        started = time.time_ns()
        report = SyncReport()
        scoped = sorted({Path(os.path.abspath(s)) for s in scopes if self.watched(s)})
        skipped = {Path(os.path.abspath(s)) for s in skip}
        with self.lock():
            known = self.ingestor.store.fingerprints()
            candidates, gone = self._list(scoped, known, report, whole)
            if skipped:
                candidates = [c for c in candidates if Path(os.path.abspath(c.path)) not in skipped]
            changed = self._changed(candidates, known, report, trust_stat, started)
            changed = self._moves(changed, gone, known, report, started)
            self._write(changed, known, report, started)
            self._delete(gone, report)
        self._forget_vanished_failures(report)
        return report

    def _forget_vanished_failures(self, report: SyncReport) -> None:
        """A file that failed because it vanished while being read is no failure: the event
        of its removal (or the next walk) deals with it."""
        base, roots = self.ingestor.base, {str(root) for root in self.roots}
        vanished = {
            f.source
            for f in report.failed
            if f.source not in roots and not os.path.lexists(source_path(f.source, base))
        }
        report.failed = [f for f in report.failed if f.source not in vanished]
        report.succeeded.extend(sorted(vanished))

    # -- listing ----------------------------------------------------------------------------

    def _list(
        self, scopes: list[Path], known: dict[str, str], report: SyncReport, whole: bool
    ) -> tuple[list[Candidate], set[str]]:
        """The files found under ``scopes`` and the stored sources gone from them."""
        ingestor, options = self.ingestor, self.ingestor.options
        candidates: dict[str, Candidate] = {}
        gone: set[str] = set()
        stored, seen = sorted(known), sorted(self._seen)
        for scope in scopes:
            if scope in self.roots and not scope.is_dir():
                # An unmounted drive or a folder renamed away is no proof its files are gone.
                report.failed.append(Failure(str(scope), "the watched folder is missing"))
                report.complete = False
                continue
            found = discover(
                [scope] if os.path.lexists(scope) else [],
                base=ingestor.base,
                supports=ingestor.parsers.supports,
                max_file_size=options.max_file_size,
                follow_symlinks=options.follow_symlinks,
                named=False,
            )
            for candidate in found.candidates:
                # The walk skips dot-entries itself; an ignored folder may sit inside the scope.
                if not self.ignore or self.watched(candidate.path):
                    candidates.setdefault(candidate.source, candidate)
            report.failed.extend(Failure(r.source, r.reason) for r in found.rejected if r.failed)
            if not found.complete:
                report.complete = False
                continue
            named = source_name(scope, ingestor.base)
            gone.update(
                source
                for source in within(stored, named)
                if source not in found.present
                and not os.path.lexists(source_path(source, ingestor.base))
            )
            self._forget_gone(seen, named, found.present, report)
        if whole and len(candidates) > options.max_files:
            raise IngestLimitExceeded(
                f"{len(candidates):,} files under the watched folders, over the --max-files "
                f"limit of {options.max_files:,}; raise the limit or watch a narrower path"
            )
        return list(candidates.values()), gone

    def _forget_gone(
        self, seen: list[str], scope: str, present: set[str], report: SyncReport
    ) -> None:
        """Forget the files seen under ``scope`` (a source name) that are gone: one that
        failed and was never stored fails no more."""
        base = self.ingestor.base
        for source in within(seen, scope):
            if (
                source in self._seen
                and source not in present
                and not os.path.lexists(source_path(source, base))
            ):
                del self._seen[source]
                report.succeeded.append(source)

    # -- change detection -------------------------------------------------------------------

    def _changed(
        self,
        candidates: list[Candidate],
        known: dict[str, str],
        report: SyncReport,
        trust_stat: bool,
        started: int,
    ) -> list[tuple[Candidate, str]]:
        """The candidates whose fingerprint is not the stored one, with it."""
        changed = []
        for candidate in candidates:
            seen = self._seen.get(candidate.source)
            if trust_stat and seen is not None and self._still(seen, candidate, known):
                report.unchanged += 1
                continue
            try:
                fingerprint = self.ingestor.fingerprint(candidate.path)
            except (RagwrightError, OSError) as error:
                self._failed(report, candidate, failure_reason(error), started)
                continue
            report.hashed += 1
            if known.get(candidate.source) == fingerprint:
                report.unchanged += 1
                report.succeeded.append(candidate.source)
                self._remember(candidate, fingerprint, started)
            else:
                changed.append((candidate, fingerprint))
        return changed

    @staticmethod
    def _still(seen: Seen, candidate: Candidate, known: dict[str, str]) -> bool:
        """Whether a file is as last synced: the same size and time (trusted), and still
        stored with the fingerprint it had (or still failing)."""
        same = seen.trusted and (seen.size, seen.mtime_ns) == (candidate.size, candidate.mtime_ns)
        stored = seen.fingerprint is None or known.get(candidate.source) == seen.fingerprint
        return same and stored

    def _remember(self, candidate: Candidate, fingerprint: str | None, started: int) -> None:
        trusted = candidate.mtime_ns < started - RACY_NS
        self._seen[candidate.source] = Seen(
            candidate.size, candidate.mtime_ns, fingerprint, trusted
        )

    def _failed(self, report: SyncReport, candidate: Candidate, reason: str, started: int) -> None:
        report.failed.append(Failure(candidate.source, reason))
        self._remember(candidate, None, started)

    # -- writes -----------------------------------------------------------------------------

    def _moves(
        self,
        changed: list[tuple[Candidate, str]],
        gone: set[str],
        known: dict[str, str],
        report: SyncReport,
        started: int,
    ) -> list[tuple[Candidate, str]]:
        """Re-key the documents of files that moved (a gone file's fingerprint and extension
        found at a new path); the changed files left to ingest."""
        if self.mover is None or not gone:
            return changed
        vanished: dict[tuple[str, str], list[str]] = {}
        for source in sorted(gone):
            key = (known.get(source, ""), Path(source).suffix.lower())
            vanished.setdefault(key, []).append(source)
        left = []
        for candidate, fingerprint in changed:
            olds = vanished.get((fingerprint, candidate.path.suffix.lower()))
            if olds and self._move(olds[0], candidate):
                old = olds.pop(0)
                gone.discard(old)
                self._seen.pop(old, None)
                report.moved.append((old, candidate.source))
                report.succeeded.append(candidate.source)
                self._remember(candidate, fingerprint, started)
            else:
                left.append((candidate, fingerprint))
        return left

    def _move(self, old: str, candidate: Candidate) -> bool:
        assert self.mover is not None
        stored = self.documents.get_document(document_id_for(old))
        if stored is None:
            return False
        try:
            moved, chunks = self.ingestor.moved(stored, candidate)
            return self.mover.move_document(stored.id, moved, chunks)
        except RagwrightError:  # e.g. the chunks came out otherwise: ingest the file instead
            return False

    def _write(
        self,
        changed: list[tuple[Candidate, str]],
        known: dict[str, str],
        report: SyncReport,
        started: int,
    ) -> None:
        """Ingest the changed files (a new version replaces the old in one transaction)."""
        if not changed:
            return
        assert self._worker is not None, "use FolderSync as a context manager"
        written = IngestReport()
        candidates = [candidate for candidate, _ in changed]
        self.ingestor.ingest_found(candidates, known, written, self._worker)
        report.added.extend(written.added)
        report.updated.extend(written.updated)
        report.unchanged += len(written.unchanged)
        report.failed.extend(written.failed)
        failed = {f.source for f in written.failed}
        for candidate, fingerprint in changed:
            if candidate.source in failed:
                self._remember(candidate, None, started)
            else:
                report.succeeded.append(candidate.source)
                self._remember(candidate, fingerprint, started)

    def _delete(self, gone: set[str], report: SyncReport) -> None:
        """Delete the documents of files still gone (one may have come back meanwhile)."""
        base = self.ingestor.base
        vanished = sorted(s for s in gone if not os.path.lexists(source_path(s, base)))
        if vanished:
            self.ingestor.store.delete_many([document_id_for(s) for s in vanished])
        for source in vanished:
            self._seen.pop(source, None)
        report.removed.extend(vanished)


def within(sources: list[str], scope: str) -> list[str]:
    """The sources of ``sources`` (sorted) at or under the source name ``scope``: found by
    bisection, so a pass over a few paths costs little in a large collection."""
    if scope == ".":  # the base folder itself: every source named relative to it
        return [s for s in sources if not Path(s).is_absolute()]
    found = []
    at = bisect_left(sources, scope)
    if at < len(sources) and sources[at] == scope:
        found.append(scope)
    prefix = scope.rstrip("/") + "/"
    at = bisect_left(sources, prefix)
    while at < len(sources) and sources[at].startswith(prefix):
        found.append(sources[at])
        at += 1
    return found
