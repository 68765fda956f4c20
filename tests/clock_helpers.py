"""A fake clock for the rate limiter's tests: time moves only when the test says, and the test
can see when every thread is asleep (a synchronization, never a timing assertion)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ManualClock:
    """A clock only the test moves: a sleeping thread blocks until the test has advanced the
    time past its wake-up, so the test decides when each window of fake time begins."""

    def __init__(self) -> None:
        self.now = 0.0
        self._wakes: list[float] = []
        self._cond = threading.Condition()

    def __call__(self) -> float:
        with self._cond:
            return self.now

    @property
    def sleeping(self) -> int:
        """Threads asleep and not yet due (a thread the last advance woke is not counted)."""
        with self._cond:
            return sum(1 for wake in self._wakes if wake > self.now)

    def sleep(self, seconds: float) -> None:
        with self._cond:
            wake = self.now + seconds
            self._wakes.append(wake)
            self._cond.wait_for(lambda: self.now >= wake)
            self._wakes.remove(wake)

    def advance(self, seconds: float) -> None:
        with self._cond:
            self.now += seconds
            self._cond.notify_all()


def settled(condition: Callable[[], bool]) -> None:
    """Waits (a synchronization, not a measurement) until ``condition`` holds."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the threads never settled"
        time.sleep(0.005)
