"""A client-side rate limiter, shared by every caller of one provider in a process, so a
concurrent extraction (or a busy server) cannot flood the provider.

Limits are ``requests_per_minute`` and ``tokens_per_minute`` from ``[llm]`` (unset: unlimited).
They are kept over a sliding window of one minute: a request is let through only when the
requests and tokens granted in the last minute leave room for it. (A token bucket of the same
capacity would let twice the limit through in a minute that starts with a full bucket; a
provider counting per minute would answer that with 429s.) A request's tokens are estimated
before it is sent (its prompt at 4 characters per token plus the completion tokens it may use)
and corrected by `Grant.settle` once the usage is known.

`pause` stops every caller until a time: a provider's 429 with ``Retry-After`` makes all
threads wait, not only the one that got it. The clock and the sleep are parameters, so a test
can run the limiter on a fake clock.

`shared_limiter` hands out one limiter per provider, base URL, model and limits, so every
wrapper built from the same settings in a process draws on the same window.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ragwright.errors import ConfigError
from ragwright.llms.wrapper import WrappedLLM
from ragwright.ports import LLM, ChatMessage, Completion

WINDOW = 60.0
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class RateLimit:
    """Requests and tokens per minute; None is unlimited."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value < 1):
                raise ConfigError(f"{name} must be an integer >= 1 (or unset: unlimited)")


class Grant:
    """One request let through: its time and the tokens counted for it."""

    __slots__ = ("_limiter", "at", "tokens")

    def __init__(self, limiter: RateLimiter, at: float, tokens: int) -> None:
        self._limiter = limiter
        self.at = at
        self.tokens = tokens

    def settle(self, tokens: int) -> None:
        """Count ``tokens`` (what the request really used) instead of the estimate."""
        self._limiter._settle(self, max(tokens, 0))


class RateLimiter:
    """The sliding-window limiter (see the module). Thread-safe."""

    def __init__(
        self,
        limit: RateLimit | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limit = limit or RateLimit()
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._grants: deque[Grant] = deque()
        self._tokens = 0  # the tokens of the grants in the window
        self._resume_at = -math.inf

    def acquire(self, tokens: int = 0) -> Grant:
        """Waits until a request of ``tokens`` (estimated) fits the limits and no pause is
        running, then counts it. A request larger than the whole token limit goes alone."""
        while True:
            with self._lock:
                now = self._clock()
                wait = self._wait(now, tokens)
                if wait <= 0:
                    grant = Grant(self, now, tokens)
                    self._grants.append(grant)
                    self._tokens += tokens
                    return grant
            self._sleep(wait)

    def pause(self, seconds: float) -> None:
        """Let no request through for ``seconds`` from now (a provider asked to wait)."""
        with self._lock:
            self._resume_at = max(self._resume_at, self._clock() + max(seconds, 0.0))

    def _wait(self, now: float, tokens: int) -> float:
        """Seconds until a request of ``tokens`` may go (0 or less: now)."""
        while self._grants and self._grants[0].at <= now - WINDOW:
            self._tokens -= self._grants.popleft().tokens
        wait = self._resume_at - now
        rpm, tpm = self.limit.requests_per_minute, self.limit.tokens_per_minute
        if rpm is not None and len(self._grants) >= rpm:
            wait = max(wait, self._grants[-rpm].at + WINDOW - now)
        if tpm is not None and self._grants and self._tokens + tokens > tpm:
            wait = max(wait, self._until_tokens_fit(now, tokens, tpm))
        return wait

    def _until_tokens_fit(self, now: float, tokens: int, tpm: int) -> float:
        """Seconds until enough grants leave the window for ``tokens`` more to fit."""
        total = self._tokens
        for grant in self._grants:
            total -= grant.tokens
            if total + tokens <= tpm or total == 0:
                return grant.at + WINDOW - now
        return 0.0  # pragma: no cover - the loop ends with an empty window

    def _settle(self, grant: Grant, tokens: int) -> None:
        with self._lock:
            if grant in self._grants:  # still in the window: correct its count
                self._tokens += tokens - grant.tokens
            grant.tokens = tokens


_SHARED: dict[tuple[str, str, str, RateLimit], RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(provider: str, base_url: str, model: str, limit: RateLimit) -> RateLimiter:
    """The process's one limiter for this provider, server, model and limits."""
    key = (provider, base_url.rstrip("/"), model, limit)
    with _SHARED_LOCK:
        limiter = _SHARED.get(key)
        if limiter is None:
            limiter = _SHARED[key] = RateLimiter(limit)
        return limiter


def estimated_tokens(messages: Sequence[ChatMessage], max_tokens: int) -> int:
    """What a request may spend: its prompt (4 characters a token) and its completion."""
    return math.ceil(sum(len(m.content) for m in messages) / CHARS_PER_TOKEN) + max_tokens


class RateLimitedLLM(WrappedLLM):
    """An `LLM` whose calls wait for a `RateLimiter`: how `create_llm` limits a provider that
    does not limit its own requests (the OpenAI adapter limits each attempt, retries included,
    and pauses the limiter on a 429)."""

    def __init__(self, llm: LLM, limiter: RateLimiter) -> None:
        super().__init__(llm)
        self.rate_limiter = limiter

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        grant = self.rate_limiter.acquire(estimated_tokens(messages, max_tokens))
        completion = super().chat(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            json_mode=json_mode,
            logprobs=logprobs,
        )
        grant.settle(completion.usage.total_tokens)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        grant = self.rate_limiter.acquire(estimated_tokens(messages, max_tokens))
        for item in super().stream(messages, max_tokens=max_tokens, temperature=temperature):
            if isinstance(item, Completion):
                grant.settle(item.usage.total_tokens)
            yield item

    def close(self) -> None:
        close = getattr(self.llm, "close", None)
        if callable(close):
            close()
