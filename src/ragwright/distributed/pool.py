"""Ray actors running `DocumentWorker`, each sent one task (a few whole files) at a time.

One task in flight per worker keeps a dead worker's loss to that task's files, which are
reported as failed (``the Ray worker died``) while the run goes on on a fresh worker. Tasks are
never retried by Ray: a file that killed its worker would kill the next one too; a re-run
reads it again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ragwright.distributed.cluster import RaySettings
from ragwright.distributed.recipe import WorkerRecipe
from ragwright.distributed.worker import DocumentWorker, WorkerResult
from ragwright.errors import ClusterError, RagwrightError
from ragwright.pipeline.ingest.ingestor import LoadedFile


@dataclass(frozen=True, slots=True)
class Completed:
    """A task's files and what came of them: the worker's result, or why it has none.
    ``sequence``: the task's place in the order tasks were submitted (0, 1, …)."""

    sequence: int
    files: Sequence[LoadedFile]
    result: WorkerResult | None
    lost: str = ""


class WorkerPool:
    """``workers`` actors built from ``recipe``; `submit` hands one a task, `drain` waits for
    the rest. Use it as a context manager (the actors are closed and killed on exit)."""

    def __init__(
        self, ray: ModuleType, recipe: WorkerRecipe, settings: RaySettings, workers: int
    ) -> None:
        self._ray = ray
        self._recipe = recipe
        self._settings = settings
        self._actor_class = ray.remote(DocumentWorker).options(
            num_cpus=settings.cpus_per_worker, max_restarts=0, max_task_retries=0
        )
        self._running: dict[Any, tuple[Any, int, Sequence[LoadedFile]]] = {}
        self._submitted = 0
        self._idle: list[Any] = []
        self._all: list[Any] = []
        #: Workers that may replace dead ones before the run gives up on the cluster.
        self._spares = 2 * workers
        try:
            self._start(workers)
        except BaseException:  # the ones that did start are not left running
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def submit(self, files: Sequence[LoadedFile]) -> list[Completed]:
        """Send ``files`` to an idle worker, first waiting for one to finish if all are busy;
        what finished meanwhile is returned."""
        done = self._wait(block=not self._idle)
        actor = self._idle.pop()
        self._running[actor.ingest.remote(list(files))] = (actor, self._submitted, files)
        self._submitted += 1
        return done

    def drain(self) -> Iterator[Completed]:
        """What every task still running comes to, as each finishes."""
        while self._running:
            yield from self._wait(block=True)

    def close(self) -> None:
        ray = self._ray
        closing = [actor.close.remote() for actor in self._all]
        with contextlib.suppress(Exception):  # a dead or stuck worker has nothing to close
            ray.get(closing, timeout=30)
        for actor in self._all:
            ray.kill(actor)
        self._all = self._idle = []

    def _wait(self, block: bool) -> list[Completed]:
        if not self._running:
            return []
        ray = self._ray
        ready, _ = ray.wait(list(self._running), num_returns=1, timeout=None if block else 0)
        return [self._collect(ref) for ref in ready]

    def _collect(self, ref: Any) -> Completed:
        actor, sequence, files = self._running.pop(ref)
        exceptions = self._ray.exceptions
        try:
            result: WorkerResult = self._ray.get(ref)
        except exceptions.RayActorError as error:
            self._replace(actor)
            reason = f"the Ray worker died while ingesting it ({_first(error)})"
            return Completed(sequence, files, None, reason)
        except exceptions.RayTaskError as error:  # the worker raised: the store failed, say
            cause = getattr(error, "cause", None)
            if isinstance(cause, RagwrightError):
                raise cause from error
            raise ClusterError(f"a Ray worker failed: {_first(error)}") from error
        self._idle.append(actor)
        return Completed(sequence, files, result)

    def _replace(self, dead: Any) -> None:
        self._all.remove(dead)
        if self._spares == 0:
            if not self._all:
                raise ClusterError("every Ray worker died; see the cluster's logs for why")
            return  # go on with those left
        self._spares -= 1
        self._start(1)

    def _start(self, count: int) -> None:
        """``count`` new workers, waited for: a worker that cannot be placed or fails to build
        its pipeline is an error now, not a run that hangs."""
        ray = self._ray
        actors = [self._actor_class.remote(self._recipe) for _ in range(count)]
        self._all.extend(actors)
        timeout = self._settings.start_timeout
        try:
            ray.get([actor.pid.remote() for actor in actors], timeout=timeout)
        except ray.exceptions.GetTimeoutError as error:
            free = ray.available_resources().get("CPU", 0.0)
            raise ClusterError(
                f"the Ray workers did not start within {timeout:g} s (the cluster has {free:g} "
                "CPUs free): ask for fewer --workers, or free the cluster"
            ) from error
        except ray.exceptions.RayActorError as error:
            raise ClusterError(f"a Ray worker could not start: {_first(error)}") from error
        self._idle.extend(actors)


def _first(error: BaseException) -> str:
    """The first line of Ray's message (the rest is a traceback and advice for Ray's users)."""
    return next((line.strip() for line in str(error).splitlines() if line.strip()), "no reason")
