"""What the OpenAI-compatible HTTP clients share: the client they open, which failures to
retry, how long to wait (exponential backoff with jitter, or what the server's ``Retry-After``
asks), and how to read a server's error message. No httpx import at module level:
``import ragwright`` stays light."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

#: The longest wait a ``Retry-After`` can impose per attempt, in seconds.
MAX_RETRY_AFTER = 60.0
_RETRY_STATUSES = frozenset({408, 429})


def open_client(api_key: str | None, timeout: httpx.Timeout | float) -> httpx.Client:
    """An HTTP client that names ragwright and sends ``api_key`` as a bearer token, if any."""
    import httpx

    headers = {"User-Agent": "ragwright"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return httpx.Client(timeout=timeout, headers=headers)


def retryable_status(status: int) -> bool:
    """Rate limits (429), request timeouts (408) and server errors (5xx) are worth retrying."""
    return status in _RETRY_STATUSES or status >= 500


@dataclass
class Backoff:
    """Retry delays: ``base * 2**attempt`` scaled by a random factor in [0.5, 1] (jitter, so
    clients that failed together do not retry together), unless the server asked for a wait.
    ``sleep`` does the waiting (a test records the waits instead of sitting them out)."""

    base: float = 0.5
    random: random.Random = field(default_factory=random.Random)
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, headers: httpx.Headers | None = None) -> float:
        asked = retry_after(headers) if headers is not None else None
        if asked is not None:
            return min(max(asked, 0.0), MAX_RETRY_AFTER)
        return self.base * (1 << attempt) * self.random.uniform(0.5, 1.0)

    def wait(self, attempt: int, headers: httpx.Headers | None = None) -> None:
        self.sleep(self.delay(attempt, headers))


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a ``Retry-After`` (or ``retry-after-ms``) header asks to wait, if any."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def server_message(response: httpx.Response) -> str:
    """The error message in an OpenAI-style (or FastAPI-style) error body, else the raw text."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        for candidate in (error, body.get("message"), body.get("detail")):
            if isinstance(candidate, str):
                return candidate
    return response.text.strip()[:500] or "(empty body)"


def describe_failure(url: str, response: httpx.Response, attempts: int, model: str) -> str:
    """A one-line account of a failed request with a hint for the usual causes."""
    status = f"{response.status_code} {response.reason_phrase}".strip()
    message = f"{url} answered {status}: {server_message(response)}"
    if attempts > 1:
        message += f" (after {attempts} attempts)"
    if response.status_code in (401, 403):
        message += ". Set the API key (OPENAI_API_KEY or the configured variable) to one this "
        message += "server accepts"
    elif response.status_code == 404:
        message += f". Check the model name {model!r} and the base URL"
    return message
