"""The client-side rate limiter: sliding-window limits on a fake clock, shared by every thread
and wrapper, and a 429's Retry-After pausing every caller. End to end against the loopback
OpenAI-compatible server, counting the requests it received in each window of fake time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clock_helpers import ManualClock, settled
from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.llms import create_llm
from ragwright.llms.openai import OpenAIChat
from ragwright.llms.rate_limit import (
    WINDOW,
    RateLimit,
    RateLimitedLLM,
    RateLimiter,
    shared_limiter,
)
from ragwright.llms.settings import LLMSettings
from ragwright.ports import ChatMessage
from ragwright.testing import ScriptedLLM
from ragwright.testing.openai_server import OpenAIServer, Reply

HELLO = [ChatMessage("user", "Say hello.")]  # 3 prompt tokens at 4 characters each


class SteppingClock:
    """A clock that a sleep moves forward at once (single-threaded tests)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(lambda _body: Reply.text("ok")) as running:
        yield running


def stepping(limit: RateLimit) -> tuple[RateLimiter, SteppingClock]:
    clock = SteppingClock()
    return RateLimiter(limit, clock=clock, sleep=clock.sleep), clock


def test_requests_per_minute_hold_over_a_sliding_window() -> None:
    limiter, _clock = stepping(RateLimit(requests_per_minute=3))
    times = [limiter.acquire().at for _ in range(7)]
    assert times == [0.0, 0.0, 0.0, WINDOW, WINDOW, WINDOW, 2 * WINDOW]


def test_a_request_waits_for_its_oldest_neighbour_to_leave_the_window() -> None:
    limiter, clock = stepping(RateLimit(requests_per_minute=2))
    limiter.acquire()
    clock.now = 10.0
    limiter.acquire()
    assert limiter.acquire().at == WINDOW  # the one at 0 left; the one at 10 is still in
    assert limiter.acquire().at == WINDOW + 10.0


def test_tokens_per_minute_count_the_estimate_until_settled() -> None:
    limiter, _clock = stepping(RateLimit(tokens_per_minute=100))
    first = limiter.acquire(60)
    first.settle(10)  # it used far less than it might have
    assert limiter.acquire(60).at == 0.0  # 10 + 60 fit
    assert limiter.acquire(60).at == WINDOW  # 130 would not


def test_a_request_larger_than_the_token_limit_goes_alone() -> None:
    limiter, _clock = stepping(RateLimit(tokens_per_minute=100))
    limiter.acquire(30)
    assert limiter.acquire(500).at == WINDOW  # waits for an empty window, then goes
    assert limiter.acquire(1).at == 2 * WINDOW


def test_a_pause_holds_every_request_until_it_ends() -> None:
    limiter, _clock = stepping(RateLimit())
    limiter.pause(7.5)
    limiter.pause(2.0)  # a shorter pause does not cut the longer one short
    assert limiter.acquire().at == 7.5
    assert limiter.acquire().at == 7.5


@pytest.mark.parametrize("limit", [{"requests_per_minute": 0}, {"tokens_per_minute": -5}])
def test_limits_below_one_are_config_errors(limit: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        RateLimit(**limit)


def test_the_limits_come_from_the_llm_table() -> None:
    table = {"llm": {"model": "m", "requests_per_minute": 60, "tokens_per_minute": 9000}}
    settings = LLMSettings.from_config(Config(table, Path("ragwright.toml")))
    assert (settings.requests_per_minute, settings.tokens_per_minute) == (60, 9000)
    assert LLMSettings.from_config(Config({"llm": {"model": "m"}})).requests_per_minute is None
    for bad in (0, "60", True, 1.5):
        with pytest.raises(ConfigError, match="requests_per_minute"):
            LLMSettings.from_config(Config({"llm": {"model": "m", "requests_per_minute": bad}}))


def test_every_llm_built_from_the_same_settings_shares_one_limiter(server: OpenAIServer) -> None:
    settings = LLMSettings(model="shared-model", base_url=server.url, requests_per_minute=41)
    first, second = create_llm(settings), create_llm(settings)
    assert isinstance(first, OpenAIChat) and isinstance(second, OpenAIChat)
    assert first.rate_limiter is not None and first.rate_limiter is second.rate_limiter
    other = create_llm(settings.with_overrides(model="another-model"))
    assert isinstance(other, OpenAIChat) and other.rate_limiter is not first.rate_limiter
    assert first.rate_limiter.limit == RateLimit(41, None)


def test_a_provider_without_its_own_limiter_is_wrapped() -> None:
    clock = SteppingClock()
    limiter = RateLimiter(RateLimit(requests_per_minute=1), clock=clock, sleep=clock.sleep)
    llm = RateLimitedLLM(ScriptedLLM("a", "b", "c"), limiter)
    assert [llm.chat(HELLO).text for _ in range(2)] == ["a", "b"]
    assert [item for item in llm.stream(HELLO) if isinstance(item, str)] == ["c"]
    assert clock.sleeps == [WINDOW, WINDOW]


def limited_client(server: OpenAIServer, limiter: RateLimiter, **options: Any) -> OpenAIChat:
    return OpenAIChat(
        "test-model", base_url=server.url, retry_backoff=0.0, rate_limiter=limiter, **options
    )


def test_concurrent_callers_never_exceed_the_limit_in_any_window() -> None:
    clock = ManualClock()
    arrivals: list[float] = []

    def responder(_body: dict[str, Any]) -> Reply:
        arrivals.append(clock())
        return Reply.text("ok")

    limit, threads_count, calls_each = 5, 6, 4
    limiter = RateLimiter(RateLimit(requests_per_minute=limit), clock=clock, sleep=clock.sleep)
    with OpenAIServer(responder) as server:
        llm = limited_client(server, limiter)
        done: list[str] = []

        def work() -> None:
            for _ in range(calls_each):
                done.append(llm.chat(HELLO).text)

        threads = [threading.Thread(target=work, daemon=True) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        total = threads_count * calls_each
        windows = 0
        while True:
            # Every thread still working is asleep: this window's requests are all in.
            settled(
                lambda: (
                    len(done) == total
                    or clock.sleeping == sum(thread.is_alive() for thread in threads)
                )
            )
            if len(done) == total:
                break
            windows += 1
            assert len(arrivals) == limit * windows  # exactly the limit, never more
            clock.advance(WINDOW)
        for thread in threads:
            thread.join()
    assert len(arrivals) == total == len(done)
    per_window = [sum(1 for t in arrivals if w * WINDOW <= t < (w + 1) * WINDOW) for w in range(5)]
    assert per_window == [5, 5, 5, 5, 4]


def test_a_429_with_retry_after_pauses_every_caller() -> None:
    clock = ManualClock()
    arrivals: list[float] = []

    def responder(_body: dict[str, Any]) -> Reply:
        arrivals.append(clock())
        return Reply.text("ok")

    limiter = RateLimiter(clock=clock, sleep=clock.sleep)  # no limits: only the pause
    with OpenAIServer(responder) as server:
        server.script(Reply.status(429, retry_after="7"))
        llm = limited_client(server, limiter, max_retries=2)
        results: list[str] = []
        refused = threading.Thread(target=lambda: results.append(llm.chat(HELLO).text), daemon=True)
        refused.start()
        settled(lambda: clock.sleeping == 1)  # it got the 429 and waits out the pause
        other = threading.Thread(target=lambda: results.append(llm.chat(HELLO).text), daemon=True)
        other.start()
        settled(lambda: clock.sleeping == 2)  # a caller that was never refused waits too
        assert len(server.requests) == 1 and arrivals == []
        clock.advance(6.9)
        settled(lambda: clock.sleeping == 2)
        assert len(server.requests) == 1  # not a moment before the server's 7 seconds
        clock.advance(0.1)
        refused.join()
        other.join()
    assert results == ["ok", "ok"]
    assert arrivals == [7.0, 7.0]


def test_a_refused_request_gives_its_tokens_back() -> None:
    clock = ManualClock()
    limiter = RateLimiter(RateLimit(tokens_per_minute=1000), clock=clock, sleep=clock.sleep)
    with OpenAIServer() as server:
        server.script(Reply.status(400, "bad request"), Reply.text("ok", usage=(3, 2)))
        llm = limited_client(server, limiter, max_retries=0)
        with pytest.raises(Exception, match="bad request"):
            llm.chat(HELLO, max_tokens=900)  # 903 tokens reserved, then given back
        assert llm.chat(HELLO, max_tokens=900).text == "ok"  # would not fit otherwise
    assert clock.now == 0.0 and clock.sleeping == 0
    assert limiter.acquire(995).at == 0.0  # the success counted its real 5 tokens


def test_shared_limiters_are_one_per_provider_server_model_and_limit() -> None:
    limit = RateLimit(10, 100)
    one = shared_limiter("openai", "http://h/v1/", "m", limit)
    assert shared_limiter("openai", "http://h/v1", "m", limit) is one
    assert shared_limiter("openai", "http://h/v1", "m", RateLimit(11, 100)) is not one
    assert shared_limiter("other", "http://h/v1", "m", limit) is not one
