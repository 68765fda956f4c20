"""`ingest --engine ray`: the driver plans, Ray workers parse, chunk and embed.

The driver runs the same survey as a local ingest (discovery, limits, what the store holds),
reads and fingerprints each file (`FileSteps.load`) and ships only new or changed ones, a few
whole files per task; workers run the local pipeline's own per-file steps. With a server store
(`WorkerRecipe.store`) each worker writes its batches of whole documents itself; otherwise the
driver writes what comes back, one batch per task, as the single writer a file store needs.
A document is never split across writes, so no write's per-document replace can erase
another's chunks. The report is the local one (added, updated, unchanged, removed, failed with
reasons, warnings), in the order of the files; ``--prune`` runs on the driver after the files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

from ragwright.distributed.cluster import RaySettings, connected, worker_count
from ragwright.distributed.pool import Completed, WorkerPool
from ragwright.distributed.recipe import WorkerRecipe
from ragwright.pipeline.ingest.discover import Candidate
from ragwright.pipeline.ingest.ingestor import (
    Failure,
    Ingestor,
    IngestReport,
    LoadedFile,
    Progress,
    recording_failure,
    write_refused_alone,
)
from ragwright.ports import IngestTarget

#: A task's bytes at most (whole files: a larger file is a task of its own).
_TASK_BYTES = 16 * 1024 * 1024


def ingest_on_ray(
    ingestor: Ingestor,
    recipe: WorkerRecipe,
    settings: RaySettings,
    paths: Sequence[Path],
    progress: Callable[[Progress], None] | None = None,
) -> IngestReport:
    """Ingest ``paths`` as ``ingestor.run`` would, the files' work done by Ray workers built
    from ``recipe`` (which must describe the ingestor's own parsers and chunking)."""
    survey = ingestor.survey(paths)
    candidates = survey.found.candidates
    report = survey.report
    tally = _Tally(ingestor.store, report, len(candidates), progress)
    with connected(settings) as ray:
        workers = worker_count(ray, settings)
        with WorkerPool(ray, recipe, settings, workers) as pool:
            task: list[LoadedFile] = []
            for candidate in candidates:
                load = partial(_load, ingestor, candidate, survey.known, report)
                loaded = recording_failure(report, candidate.source, load)
                if loaded is None:
                    tally.files(1)
                    continue
                task.append(loaded)
                if len(task) >= settings.files_per_task or _size(task) >= _TASK_BYTES:
                    tally.record(pool.submit(task))
                    task = []
            if task:
                tally.record(pool.submit(task))
            tally.record(pool.drain())
    tally.finished()
    _in_file_order(report, [candidate.source for candidate in candidates])
    ingestor.finish(paths, survey)
    return report


def _load(
    ingestor: Ingestor, candidate: Candidate, known: dict[str, str], report: IngestReport
) -> LoadedFile | None:
    """The file read and fingerprinted on the driver; None (and ``unchanged``) when it is."""
    loaded = ingestor.steps.load(candidate, known)
    if loaded is None:
        report.unchanged.append(candidate.source)
    return loaded


class _Tally:
    """The driver's side of each finished task: the worker's report merged in, its embedded
    documents written (when it did not write them), progress told. Tasks are written in the
    order they were sent, so a file store holds its rows in the order a local run writes
    them (ties in a ranking then fall the same way); one finished ahead of a slower one
    waits here, bounded by what the other workers do while the slow task runs (its parse
    has a time limit)."""

    def __init__(
        self,
        store: IngestTarget,
        report: IngestReport,
        total: int,
        progress: Callable[[Progress], None] | None,
    ) -> None:
        self.store = store
        self.report = report
        self.total = total
        self.progress = progress
        self.done = 0
        self._waiting: dict[int, Completed] = {}
        self._next = 0

    def record(self, completed: Iterable[Completed]) -> None:
        for task in completed:
            self._waiting[task.sequence] = task
            while self._next in self._waiting:
                self._one(self._waiting.pop(self._next))
                self._next += 1

    def _one(self, task: Completed) -> None:
        if task.result is None:
            self.report.failed.extend(Failure(f.candidate.source, task.lost) for f in task.files)
        else:
            # A document the store refuses (NUL characters) fails alone; the rest is written.
            result = task.result
            refused = write_refused_alone(self.store, result.writes) if result.writes else []
            result.report.refused(refused, result.writes)
            self.report.merge(result.report)
        self.files(len(task.files), task.files[-1].candidate.source)

    def files(self, count: int, current: str = "") -> None:
        self.done += count
        if self.progress is not None:
            self.progress(Progress(self.done, self.total, self.report.chunks_written, current))

    def finished(self) -> None:
        if self.progress is not None:
            self.progress(Progress(self.total, self.total, self.report.chunks_written, ""))


def _size(task: Sequence[LoadedFile]) -> int:
    return sum(len(loaded.data) for loaded in task)


def _in_file_order(report: IngestReport, sources: Sequence[str]) -> None:
    """The report's lists in the order of the files (as a local run's are), not in the order
    tasks finished; entries about no single file (discovery's) keep their places first."""
    position = {source: index for index, source in enumerate(sources)}
    report.added.sort(key=lambda source: position.get(source, -1))
    report.updated.sort(key=lambda source: position.get(source, -1))
    report.unchanged.sort(key=lambda source: position.get(source, -1))
    report.failed.sort(key=lambda failure: position.get(failure.source, -1))
    report.warnings.sort(key=lambda warning: position.get(warning.source, -1))
