"""Fan out: run one call per member in parallel, each on that member's own threads, and
collect what came back within the timeout.

Each member has its own small thread pool, so a member that hangs ties up only its own
threads: the others keep answering. A call that runs past the timeout cannot be stopped (a
thread cannot be killed); it is left to finish on its thread, and its result is dropped.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, TypeVar

from ragwright.errors import RagwrightError

T = TypeVar("T")
log = logging.getLogger("ragwright.federation")
#: Concurrent calls one member serves (a server's requests share them).
THREADS_PER_MEMBER = 8
#: The longest failure reason shown (a driver's message can run to pages).
MAX_REASON_CHARS = 300


@dataclass(frozen=True)
class Failure:
    """Why a member gave nothing: its error (``error``, None for a timeout) and a one-line
    reason to show."""

    reason: str
    error: BaseException | None = None

    @property
    def timed_out(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FanOut(Generic[T]):
    """Each member's result, and each failed member's `Failure`, in member order."""

    results: dict[str, T]
    failures: dict[str, Failure]


class Pools:
    """One thread pool per member, made on first use; `close` lets running calls finish on
    their own."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._pools = {
            name: ThreadPoolExecutor(THREADS_PER_MEMBER, thread_name_prefix=f"federation-{name}")
            for name in names
        }

    def run(self, calls: Mapping[str, Callable[[], T]], timeout: float) -> FanOut[T]:
        """Run ``calls`` (member name → call) in parallel; wait at most ``timeout`` seconds.
        Each runs in a copy of the caller's context, so a member's tracing spans are children
        of the caller's (`ragwright.tracing`), not traces of their own."""
        futures: dict[str, Future[T]] = {
            name: self._pools[name].submit(contextvars.copy_context().run, call)
            for name, call in calls.items()
        }
        wait(futures.values(), timeout=timeout)
        results: dict[str, T] = {}
        failures: dict[str, Failure] = {}
        for name, future in futures.items():
            if not future.done():
                future.cancel()  # still queued: never started; running: its result is dropped
                failures[name] = Failure(f"no answer within {timeout:g} s")
                continue
            error = future.exception()
            if error is None:
                results[name] = future.result()
            else:
                if not isinstance(error, RagwrightError):  # a bug or a driver error: keep it
                    log.error("federation member %s failed", name, exc_info=error)
                failures[name] = Failure(reason_of(error), error)
        return FanOut(results, failures)

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)


def reason_of(error: BaseException) -> str:
    """One line saying why: ragwright's own message, else the error's type and message."""
    text = str(error) if isinstance(error, RagwrightError) else f"{type(error).__name__}: {error}"
    line = " ".join(text.split())
    return line if len(line) <= MAX_REASON_CHARS else line[: MAX_REASON_CHARS - 1] + "…"
