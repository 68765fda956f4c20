"""A circuit breaker: stop calling a server that keeps failing, try again after a cool-down.

Closed (normal): every call goes through; ``failures`` consecutive failed attempts open it.
Open: calls are refused at once with `CircuitOpen`, so a dead server costs no timeouts.
Half-open (the cool-down has passed): one trial call goes through; success closes the breaker,
failure opens it for another cool-down. A caller reports the outcome of every call it was let
make (`succeeded` or `failed`); a trial whose outcome never comes (its caller was interrupted)
stops holding the breaker after one more cool-down. The clock is a parameter so tests need not
wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ragwright.errors import CircuitOpen, ConfigError


class CircuitBreaker:
    def __init__(
        self,
        server: str,
        *,
        failures: int = 5,
        cooldown: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures < 1 or cooldown < 0:
            raise ConfigError("breaker failures must be >= 1 and its cooldown not negative")
        self.server = server
        self.threshold = failures
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_since: float | None = None

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half-open``."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "open" if self._clock() - self._opened_at < self.cooldown else "half-open"

    def before_call(self) -> None:
        """Raises `CircuitOpen` unless a call may go through now."""
        with self._lock:
            if self._opened_at is None:
                return
            now = self._clock()
            waited = now - self._opened_at
            trial_running = (
                self._trial_since is not None and now - self._trial_since < self.cooldown
            )
            if waited >= self.cooldown and not trial_running:
                self._trial_since = now  # half-open: this call is the one trial
                return
            retry_in = max(self.cooldown - waited, 0.0)
            raise CircuitOpen(self.server, self._failures, retry_in)

    def succeeded(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_since = None

    def failed(self) -> None:
        with self._lock:
            self._failures += 1
            self._trial_since = None
            if self._opened_at is not None or self._failures >= self.threshold:
                self._opened_at = self._clock()
