"""The OpenAI-compatible chat client against a real loopback server speaking the API."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator

import httpx
import pytest

from ragwright._http import MAX_RETRY_AFTER, Backoff
from ragwright.errors import CircuitOpen, ConfigError, LLMError, LLMResponseError
from ragwright.llms.breaker import CircuitBreaker
from ragwright.llms.openai import OpenAIChat
from ragwright.models import Usage
from ragwright.ports import LLM, ChatMessage, Completion
from ragwright.testing import ScriptedLLM
from ragwright.testing.openai_server import OpenAIServer, Reply

HELLO = [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello.")]


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as running:
        yield running


def client(server: OpenAIServer, **options: object) -> OpenAIChat:
    settings: dict[str, object] = {"retry_backoff": 0.0, "max_retries": 2} | options
    return OpenAIChat("test-model", base_url=server.url, **settings)  # type: ignore[arg-type]


def stream_of(llm: OpenAIChat) -> tuple[list[str], Completion]:
    items = list(llm.stream(HELLO))
    pieces, final = items[:-1], items[-1]
    assert all(isinstance(piece, str) for piece in pieces)
    assert isinstance(final, Completion)
    return [str(piece) for piece in pieces], final


def test_both_the_client_and_the_fake_are_llms(server: OpenAIServer) -> None:
    assert isinstance(client(server), LLM)
    assert isinstance(ScriptedLLM(), LLM)


def test_chat_sends_the_conversation_and_reads_text_usage_and_finish(
    server: OpenAIServer,
) -> None:
    server.script(Reply.text("Hello!", usage=(12, 3), finish_reason="length"))
    with client(server) as llm:
        completion = llm.chat(HELLO, max_tokens=7, temperature=0.2)
    assert completion.text == "Hello!"
    assert completion.usage == Usage(calls=1, prompt_tokens=12, completion_tokens=3)
    assert completion.finish_reason == "length"
    assert completion.model == "test-model"
    body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello."},
    ]
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("test-model", 7, 0.2)
    assert "stream" not in body and "response_format" not in body


def test_json_mode_and_logprobs_are_asked_for_and_read(server: OpenAIServer) -> None:
    server.script(Reply.text('{"a": 1}', logprobs=[('{"', -0.01), ("a", -2.5)]))
    completion = client(server).chat(HELLO, json_mode=True, logprobs=True)
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert server.requests[0]["logprobs"] is True
    assert completion.logprobs is not None
    assert [(t.token, t.logprob) for t in completion.logprobs] == [('{"', -0.01), ("a", -2.5)]


def test_usage_is_estimated_when_the_server_sends_none(server: OpenAIServer) -> None:
    server.script(Reply.text("12345678", usage=None))
    completion = client(server).chat(HELLO)
    assert completion.usage.completion_tokens == 2  # 8 characters at 4 per token
    assert completion.usage.prompt_tokens == 5  # 19 characters
    assert completion.logprobs is None


def test_the_api_key_comes_from_the_configured_variable(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-secret")
    server.script("a", "b")
    client(server, api_key_env="MY_LLM_KEY").chat(HELLO)
    client(server, api_key="sk-given").chat(HELLO)
    assert server.headers[0]["Authorization"] == "Bearer sk-secret"
    assert server.headers[1]["Authorization"] == "Bearer sk-given"


def test_streaming_yields_pieces_then_the_completion_with_the_final_usage(
    server: OpenAIServer,
) -> None:
    server.script(Reply.text("Paris is the capital [1].", usage=(40, 7)))
    pieces, final = stream_of(client(server))
    assert len(pieces) > 1
    assert "".join(pieces) == final.text == "Paris is the capital [1]."
    assert final.usage == Usage(1, 40, 7)
    assert final.finish_reason == "stop"
    body = server.requests[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def recorded_backoff(base: float = 0.5) -> tuple[Backoff, list[float]]:
    """A backoff that records its waits instead of sleeping."""
    waits: list[float] = []
    return Backoff(base, random.Random(3), waits.append), waits


def test_rate_limits_are_retried_after_the_wait_the_server_asks(server: OpenAIServer) -> None:
    backoff, waits = recorded_backoff()
    server.script(Reply.status(429, retry_after="3"), Reply.status(503, retry_after="2"), "ok")
    assert client(server, backoff=backoff).chat(HELLO).text == "ok"
    assert len(server.requests) == 3
    assert waits == [3.0, 2.0]  # what the server asked, not the backoff's 0.25-0.5 s and 0.5-1 s


def test_without_retry_after_the_waits_double_with_jitter(server: OpenAIServer) -> None:
    backoff, waits = recorded_backoff(0.5)
    server.script(Reply.status(500), Reply.status(502), Reply.status(429), "ok")
    assert client(server, backoff=backoff, max_retries=3).chat(HELLO).text == "ok"
    assert len(waits) == 3
    for attempt, wait in enumerate(waits):
        assert 0.25 * 2**attempt <= wait <= 0.5 * 2**attempt
    assert len(set(waits)) == 3


def test_server_errors_are_retried_then_reported(server: OpenAIServer) -> None:
    server.script(Reply.status(500), Reply.status(503), Reply.status(502, "gateway down"))
    with pytest.raises(LLMError, match=r"502.*gateway down.*after 3 attempts"):
        client(server, max_retries=2).chat(HELLO)
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server: OpenAIServer) -> None:
    server.script(Reply.status(401, "Incorrect API key"), "never sent")
    with pytest.raises(LLMError, match=r"401.*Incorrect API key.*API key"):
        client(server).chat(HELLO)
    assert len(server.requests) == 1


def test_a_slow_answer_times_out_and_is_retried(server: OpenAIServer) -> None:
    server.script(Reply.text("too late").after(5), "in time")
    assert client(server, read_timeout=0.2).chat(HELLO).text == "in time"
    assert len(server.requests) == 2


def test_timeouts_on_every_attempt_raise_llm_error(server: OpenAIServer) -> None:
    server.script(*[Reply.text("late").after(5)] * 2)
    with pytest.raises(LLMError, match=r"after 2 attempts.*Timeout"):
        client(server, read_timeout=0.2, max_retries=1).chat(HELLO)


@pytest.fixture
def unaccepting_port() -> Iterator[int]:
    """A loopback port whose listener never accepts and whose backlog is full, so a new
    connection is never established: the client's connect timeout is what ends the wait."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = int(listener.getsockname()[1])
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    yield port
    for sock in [*fillers, listener]:
        sock.close()


def test_a_connection_that_is_never_accepted_hits_the_connect_timeout(
    unaccepting_port: int,
) -> None:
    base_url = f"http://127.0.0.1:{unaccepting_port}/v1"
    llm = OpenAIChat("m", base_url=base_url, connect_timeout=0.2, max_retries=1, retry_backoff=0)
    with pytest.raises(LLMError, match=r"after 2 attempts: ConnectTimeout"):
        llm.chat(HELLO)


def test_a_stream_is_retried_before_its_first_byte(server: OpenAIServer) -> None:
    server.script(Reply.status(503), Reply.text("streamed"))
    _, final = stream_of(client(server))
    assert final.text == "streamed" and len(server.requests) == 2


@pytest.mark.parametrize(
    "reply",
    [
        Reply.raw("{not json"),
        Reply.raw('["a list"]'),
        Reply.raw('{"choices": []}'),
        Reply.raw('{"choices": [{"message": {"content": 42}}]}'),
    ],
)
def test_a_reply_that_is_no_completion_is_a_typed_error(server: OpenAIServer, reply: Reply) -> None:
    server.script(reply)
    with pytest.raises(LLMResponseError):
        client(server).chat(HELLO)


def test_malformed_json_in_a_stream_is_a_typed_error(server: OpenAIServer) -> None:
    server.script(Reply.raw("data: {broken\n\ndata: [DONE]\n\n", content_type="text/event-stream"))
    with pytest.raises(LLMResponseError, match="malformed JSON"):
        list(client(server).stream(HELLO))


def sse(*events: str) -> Reply:
    return Reply.raw("".join(f"data: {e}\n\n" for e in events), content_type="text/event-stream")


def test_an_error_event_in_the_middle_of_a_stream_is_an_llm_error(server: OpenAIServer) -> None:
    first = '{"choices": [{"index": 0, "delta": {"content": "Half an"}}]}'
    error = '{"error": {"message": "the model crashed", "type": "server_error"}}'
    server.script(sse(first, error, "[DONE]"))
    breaker = CircuitBreaker("test", failures=1)
    pieces = client(server, breaker=breaker).stream(HELLO)
    assert next(pieces) == "Half an"
    with pytest.raises(LLMError, match="in the middle of the stream: the model crashed"):
        next(pieces)
    assert breaker.state == "open"


def test_a_stream_chunk_of_the_wrong_shape_is_a_typed_error(server: OpenAIServer) -> None:
    server.script(sse('{"choices": "text"}', "[DONE]"))
    with pytest.raises(LLMResponseError, match="without a list of choices"):
        list(client(server).stream(HELLO))


def test_a_stream_cut_short_is_an_llm_error_not_a_shorter_answer(server: OpenAIServer) -> None:
    first = '{"choices": [{"index": 0, "delta": {"content": "The answer is"}}]}'
    server.script(sse(first))  # no finish reason, no [DONE]: the connection just closed
    with pytest.raises(LLMError, match="ended before the answer was complete"):
        list(client(server).stream(HELLO))


def test_a_stream_without_done_but_finished_is_complete(server: OpenAIServer) -> None:
    last = '{"choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": "stop"}]}'
    server.script(sse(last))  # some servers end without [DONE]
    _, final = stream_of(client(server))
    assert (final.text, final.finish_reason) == ("Done.", "stop")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_refuses_then_lets_one_trial_through(server: OpenAIServer) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("test", failures=3, cooldown=30.0, clock=clock)
    llm = client(server, max_retries=5, breaker=breaker)
    server.script(*[Reply.status(500)] * 3)
    with pytest.raises(CircuitOpen, match="failed 3 times"):
        llm.chat(HELLO)
    assert len(server.requests) == 3  # the breaker stopped the retries
    assert breaker.state == "open"
    with pytest.raises(CircuitOpen):
        llm.chat(HELLO)
    assert len(server.requests) == 3  # refused without a request
    clock.now = 31.0
    assert breaker.state == "half-open"
    server.script(Reply.status(500))
    with pytest.raises(CircuitOpen):
        llm.chat(HELLO)  # the one trial fails: open again for a full cool-down
    assert len(server.requests) == 4
    clock.now = 62.0
    server.script("back")
    assert llm.chat(HELLO).text == "back"
    assert breaker.state == "closed"


def test_rate_limits_do_not_open_the_breaker(server: OpenAIServer) -> None:
    breaker = CircuitBreaker("test", failures=2)
    server.script(*[Reply.status(429, retry_after="0")] * 3, "ok")
    assert client(server, max_retries=3, breaker=breaker).chat(HELLO).text == "ok"
    assert breaker.state == "closed"


def test_an_unreachable_server_is_an_llm_error() -> None:
    with OpenAIServer() as gone:
        url = gone.url
    llm = OpenAIChat("m", base_url=url, max_retries=1, retry_backoff=0.0)
    with pytest.raises(LLMError, match="cannot get an answer"):
        llm.chat(HELLO)


@pytest.mark.parametrize(
    "options",
    [{"base_url": "ftp://x"}, {"max_retries": -1}, {"read_timeout": 0}],
)
def test_bad_settings_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        OpenAIChat("m", **options)  # type: ignore[arg-type]


def test_backoff_doubles_with_jitter_unless_the_server_names_a_wait() -> None:
    backoff = Backoff(0.5, random.Random(7))
    for attempt in range(4):
        delay = backoff.delay(attempt)
        assert 0.25 * 2**attempt <= delay <= 0.5 * 2**attempt
    assert backoff.delay(3, httpx.Headers({"Retry-After": "7"})) == 7.0
    assert backoff.delay(0, httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert backoff.delay(0, httpx.Headers({"Retry-After": "86400"})) == MAX_RETRY_AFTER
    past = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert backoff.delay(0, httpx.Headers({"Retry-After": past})) == 0.0


def half_open(server: OpenAIServer) -> tuple[OpenAIChat, CircuitBreaker, FakeClock]:
    """A client whose breaker one failure opened and whose cool-down has just passed."""
    clock = FakeClock()
    breaker = CircuitBreaker("test", failures=1, cooldown=30.0, clock=clock)
    llm = client(server, max_retries=0, breaker=breaker)
    server.script(Reply.status(500))
    with pytest.raises(LLMError):
        llm.chat(HELLO)
    assert breaker.state == "open"
    clock.now = 31.0
    assert breaker.state == "half-open"
    return llm, breaker, clock


@pytest.mark.parametrize(
    "trial",
    [
        Reply.raw("{not json"),
        Reply.raw('{"choices": []}'),
        Reply.raw("data: {broken\n\ndata: [DONE]\n\n", content_type="text/event-stream"),
    ],
)
def test_a_trial_that_gets_a_broken_reply_opens_the_breaker_again(
    server: OpenAIServer, trial: Reply
) -> None:
    llm, breaker, clock = half_open(server)
    server.script(trial)
    with pytest.raises(LLMResponseError):
        if trial.headers.get("Content-Type") == "text/event-stream":
            list(llm.stream(HELLO))
        else:
            llm.chat(HELLO)
    assert breaker.state == "open"  # a broken reply is a failure, not a trial left running
    clock.now = 62.0
    server.script("back")
    assert llm.chat(HELLO).text == "back"
    assert breaker.state == "closed"


def test_a_stream_abandoned_during_the_trial_does_not_hold_the_breaker(
    server: OpenAIServer,
) -> None:
    llm, breaker, _ = half_open(server)
    server.script(Reply.text("a long streamed answer"))
    pieces = llm.stream(HELLO)
    assert next(pieces) == "a "
    pieces.close()  # the reader stops early: the server did answer
    server.script("next")
    assert llm.chat(HELLO).text == "next"
    assert breaker.state == "closed"


def test_a_trial_that_never_reports_stops_holding_the_breaker_after_a_cooldown() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("test", failures=1, cooldown=30.0, clock=clock)
    breaker.failed()
    clock.now = 31.0
    breaker.before_call()  # the trial, whose caller is then interrupted before it reports
    with pytest.raises(CircuitOpen):
        breaker.before_call()  # one trial at a time
    clock.now = 61.0
    breaker.before_call()  # another trial
    breaker.succeeded()
    assert breaker.state == "closed"
