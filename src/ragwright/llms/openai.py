"""Chat completions from any OpenAI-compatible server: OpenAI, Azure OpenAI, Ollama
(``http://localhost:11434/v1``), vLLM, llama.cpp's server, LM Studio.

``POST {base_url}/chat/completions``. Timeouts, rate limits (429), server errors (5xx, 408) and
connection failures are retried with exponential backoff and jitter, honouring ``Retry-After``;
other errors raise `LLMError` with the server's own message, and a reply that is not a chat
completion raises `LLMResponseError`. A `CircuitBreaker` counts failed attempts (5xx, timeouts,
unreachable server) and, once open, refuses calls at once with `CircuitOpen`.

With a `RateLimiter` (`from_settings` takes the process's shared one, see
`ragwright.llms.rate_limit`) every attempt, a retry included, waits for its turn, and a 429
pauses the limiter for the wait the server asked (or the backoff), so every thread calling the
same provider waits, not only the one that was refused.

Streaming uses server-sent events (``"stream": true``; ``data: {...}`` lines, ``data: [DONE]``
at the end) and asks for the usage in the last chunk (``stream_options.include_usage``). A
stream is retried only until its first byte arrives: text already shown cannot be taken back.
When a server reports no usage, tokens are estimated at 4 characters each so budgets still hold.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ragwright._http import Backoff, describe_failure, open_client, retryable_status
from ragwright.errors import ConfigError, LLMError, LLMResponseError
from ragwright.llms.breaker import CircuitBreaker
from ragwright.llms.rate_limit import (
    Grant,
    RateLimit,
    RateLimiter,
    estimated_tokens,
    shared_limiter,
)
from ragwright.models import Usage
from ragwright.ports import ChatMessage, Completion, TokenLogprob

if TYPE_CHECKING:
    import httpx

    from ragwright.llms.settings import LLMSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
CHARS_PER_TOKEN = 4
DONE = "[DONE]"  # the data of the stream's last event


class OpenAIChat:
    """An `LLM` over an OpenAI-compatible ``/chat/completions`` endpoint.

    The API key is ``api_key``, else the environment variable ``api_key_env``; a local server
    needs none. ``backoff`` replaces the waits ``retry_backoff`` describes. Use as a context
    manager, or call :meth:`close`, to release the connections.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
        breaker: CircuitBreaker | None = None,
        backoff: Backoff | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        if not model.strip():
            raise ConfigError("the openai LLM needs a model name (--model or [llm] model)")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http:// or https:// URL; got {base_url!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0; got {max_retries!r}")
        if not (connect_timeout > 0 and read_timeout > 0 and retry_backoff >= 0):
            raise ConfigError("timeouts must be positive and retry_backoff not negative")
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._url = f"{self._base_url}/chat/completions"
        self._api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self._timeouts = (connect_timeout, read_timeout)
        self._max_retries = max_retries
        self._backoff = backoff or Backoff(retry_backoff, random.Random())
        self.breaker = breaker or CircuitBreaker(self._base_url)
        self.rate_limiter = rate_limiter
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> OpenAIChat:
        """The client the ``[llm]`` settings describe (the ``ragwright.llms`` entry point)."""
        return cls(
            settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            api_key_env=settings.api_key_env,
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            max_retries=settings.max_retries,
            retry_backoff=settings.retry_backoff,
            breaker=CircuitBreaker(
                settings.base_url,
                failures=settings.breaker_failures,
                cooldown=settings.breaker_cooldown,
            ),
            rate_limiter=shared_limiter(
                settings.provider,
                settings.base_url,
                settings.model,
                RateLimit(settings.requests_per_minute, settings.tokens_per_minute),
            ),
        )

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIChat({self._model!r}, base_url={self._base_url!r})"

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        payload = self._payload(messages, max_tokens, temperature)
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        if logprobs:
            payload["logprobs"] = True
        response, grant = self._send(payload, messages, stream=False)
        completion = self._completion(response, messages)
        if grant is not None:
            grant.settle(completion.usage.total_tokens)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        import httpx

        payload = self._payload(messages, max_tokens, temperature)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        response, grant = self._send(payload, messages, stream=True)
        pieces: list[str] = []
        finish_reason: str | None = None
        usage: Usage | None = None
        model = self._model
        done = False
        try:
            for data in _sse_data(response):
                if data == DONE:
                    done = True
                    break
                chunk = _json_object(data, self._url)
                model = str(chunk.get("model") or model)
                usage = _usage(chunk.get("usage")) or usage
                for text, finished in _deltas(chunk, self._url):
                    if text:
                        pieces.append(text)
                        yield text
                    finish_reason = finished or finish_reason
            if not done and finish_reason is None:
                raise LLMError(
                    f"the stream from {self._url} ended before the answer was complete "
                    "(no finish reason, no [DONE])"
                )
        except GeneratorExit:
            self.breaker.succeeded()  # the reader stopped early; the server was answering
            raise
        except LLMError:  # an error event, a chunk that is no completion chunk, a cut stream
            self.breaker.failed()
            raise
        except httpx.HTTPError as exc:
            self.breaker.failed()
            raise LLMError(f"the stream from {self._url} broke off: {exc!r}") from exc
        finally:
            response.close()
        self.breaker.succeeded()
        text = "".join(pieces)
        usage = usage or _estimated_usage(messages, text)
        if grant is not None:
            grant.settle(usage.total_tokens)
        yield Completion(text, model, usage, finish_reason, None)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests -----------------------------------------------------------------------------

    def _payload(
        self, messages: Sequence[ChatMessage], max_tokens: int, temperature: float
    ) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }

    def _send(
        self, payload: dict[str, Any], messages: Sequence[ChatMessage], *, stream: bool
    ) -> tuple[httpx.Response, Grant | None]:
        """The response to ``payload`` with a success status, after retries, and the rate
        limiter's grant for it (settled by the caller once the usage is known). With ``stream``
        its body is unread and the caller closes it; otherwise it is read (a body that times
        out or breaks off is retried like a failed connection)."""
        import httpx

        client = self._http()
        tokens = estimated_tokens(messages, int(payload["max_tokens"]))
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            self.breaker.before_call()
            grant = self.rate_limiter.acquire(tokens) if self.rate_limiter else None
            request = client.build_request("POST", self._url, json=payload)
            try:
                response = client.send(request, stream=stream)
            except httpx.TransportError as exc:  # includes connect and read timeouts
                self.breaker.failed()
                if last:
                    raise LLMError(
                        f"cannot get an answer from {self._url} after {attempt + 1} attempts: "
                        f"{exc!r}"
                    ) from exc
                self._backoff.wait(attempt)
                continue
            if response.is_success:
                return response, grant
            if grant is not None:
                grant.settle(0)  # a refused request spent no tokens
            if stream:
                try:
                    response.read()
                except httpx.HTTPError:
                    pass  # the status says enough
                finally:
                    response.close()
            if retryable_status(response.status_code):
                if response.status_code != 429:  # a rate limit is no outage
                    self.breaker.failed()
                if not last:
                    self._wait(attempt, response)
                    continue
            else:
                self.breaker.succeeded()  # the server is up; the request is what failed
            raise LLMError(describe_failure(self._url, response, attempt + 1, self._model))
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, response: httpx.Response) -> None:
        """Waits before retrying a refused request; a 429 makes every caller of the shared
        limiter wait (the next `RateLimiter.acquire` sits the pause out)."""
        if response.status_code == 429 and self.rate_limiter is not None:
            self.rate_limiter.pause(self._backoff.delay(attempt, response.headers))
        else:
            self._backoff.wait(attempt, response.headers)

    def _completion(self, response: httpx.Response, messages: Sequence[ChatMessage]) -> Completion:
        try:
            body = _json_object(response.text, self._url)
        except LLMResponseError:
            self.breaker.failed()
            raise
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            if not isinstance(text, str):
                raise TypeError(f"message content is {type(text).__name__}, not text")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            self.breaker.failed()
            raise LLMResponseError(
                f"{self._url} sent a reply without a chat completion message: {exc!r}"
            ) from exc
        self.breaker.succeeded()
        return Completion(
            text=text,
            model=str(body.get("model") or self._model),
            usage=_usage(body.get("usage")) or _estimated_usage(messages, text),
            finish_reason=choice.get("finish_reason"),
            logprobs=_logprobs(choice.get("logprobs")),
        )

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                connect, read = self._timeouts
                self._client = open_client(self._api_key, httpx.Timeout(read, connect=connect))
            return self._client


def _sse_data(response: httpx.Response) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent event stream (the last is `DONE`, unless the
    stream was cut short)."""
    for line in response.iter_lines():
        if not line.startswith("data:"):
            continue  # comments (":"), "event:", "id:" and blank separators
        data = line[5:].strip()
        if data:
            yield data


def _deltas(chunk: dict[str, Any], url: str) -> Iterator[tuple[str, str | None]]:
    """The text and finish reason of each choice in a stream chunk. A chunk reporting an
    error (OpenAI and vLLM send one when generation fails mid-stream) raises `LLMError`."""
    error = chunk.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise LLMError(f"{url} reported an error in the middle of the stream: {message}")
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise LLMResponseError(f"{url} sent a stream chunk without a list of choices: {chunk!r}")
    for choice in choices:
        delta = choice.get("delta")
        text = delta.get("content") if isinstance(delta, dict) else None
        finished = choice.get("finish_reason")
        yield (text if isinstance(text, str) else ""), (str(finished) if finished else None)


def _json_object(text: str, url: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise LLMResponseError(f"{url} sent malformed JSON: {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise LLMResponseError(f"{url} sent JSON that is not an object: {text[:200]!r}")
    return value


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion)


def _estimated_usage(messages: Sequence[ChatMessage], text: str) -> Usage:
    prompt_chars = sum(len(m.content) for m in messages)
    return Usage(
        calls=1,
        prompt_tokens=math.ceil(prompt_chars / CHARS_PER_TOKEN),
        completion_tokens=math.ceil(len(text) / CHARS_PER_TOKEN),
    )


def _logprobs(raw: object) -> tuple[TokenLogprob, ...] | None:
    content = raw.get("content") if isinstance(raw, dict) else None
    if not isinstance(content, list):
        return None
    tokens = []
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("logprob"), int | float):
            tokens.append(TokenLogprob(str(item.get("token", "")), float(item["logprob"])))
    return tuple(tokens)


__all__ = ["DEFAULT_BASE_URL", "OpenAIChat"]
