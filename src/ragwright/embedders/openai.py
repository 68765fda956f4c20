"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp…).

``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the vectors come back in
the ``index`` order the server gives and are put back in input order, checked (count, width,
finiteness) and L2-normalized. Rate limits (429), server errors (5xx, 408) and connection failures
are retried with exponential backoff and jitter, honouring ``Retry-After``; any other error raises
:class:`~ragwright.errors.EmbedderError` with the server's own message.

The API key is the ``api_key`` argument, else ``OPENAI_API_KEY``; a local server needs none.
The vector width is ``dimension`` when given (and then checked); otherwise the first call
discovers it, so reading ``space`` before any embedding makes one small request.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragwright._http import Backoff, describe_failure, open_client, retryable_status
from ragwright.errors import ConfigError, EmbedderError
from ragwright.models import EmbeddingSpace
from ragwright.ports import EmbeddedCount, Vectors

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Bytes per token assumed by :meth:`OpenAIEmbedder.count_tokens` (see there).
BYTES_PER_TOKEN = 3
#: Estimated tokens one request may carry (OpenAI allows 300k per request).
MAX_REQUEST_TOKENS = 250_000
_PROBE_TEXT = "ragwright dimension probe"


class OpenAIEmbedder:
    """Embedder (and estimating TokenCounter) over an OpenAI-compatible HTTP API.

    ``retry_backoff`` is the first backoff delay in seconds; each retry doubles it, with jitter.
    Use as a context manager, or call :meth:`close`, to release the HTTP connections.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        dimension: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 4,
        max_tokens: int = 8191,
        retry_backoff: float = 0.5,
    ) -> None:
        if not model.strip():
            raise ConfigError("the openai embedder needs a model name: openai:MODEL")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http:// or https:// URL; got {base_url!r}")
        for name, value, least in (
            ("batch_size", batch_size, 1),
            ("max_retries", max_retries, 0),
            ("max_tokens", max_tokens, 1),
            ("dimension", 1 if dimension is None else dimension, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ConfigError(f"{name} must be an integer >= {least}; got {value!r}")
        if not timeout > 0 or not retry_backoff >= 0:
            raise ConfigError("timeout must be positive and retry_backoff not negative")
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._dimension = dimension
        self._batch_size = batch_size
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._backoff = Backoff(retry_backoff, random.Random())
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, argument: str) -> OpenAIEmbedder:
        """The embedder an ``openai:MODEL`` or ``openai:MODEL@BASE_URL`` spec names."""
        model, at, base_url = argument.partition("@")
        if not model:
            raise ConfigError("the openai embedder needs a model: openai:MODEL[@BASE_URL]")
        return cls(model, base_url=base_url) if at else cls(model)

    @property
    def spec(self) -> str:
        if self._base_url == DEFAULT_BASE_URL:
            return f"openai:{self._model}"
        return f"openai:{self._model}@{self._base_url}"

    @property
    def space(self) -> EmbeddingSpace:
        """The space; makes one request to learn the width unless ``dimension`` was given."""
        if self._dimension is None:
            self._post([_PROBE_TEXT])
        assert self._dimension is not None
        key = f"openai-compatible|{self._base_url}|{self._model}|{self._dimension}"
        return EmbeddingSpace(
            model=self._model,
            dimension=self._dimension,
            normalized=True,
            metric="cosine",
            fingerprint=hashlib.sha256(key.encode()).hexdigest(),
        )

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """An estimate, not the model's tokenizer: ``ceil(UTF-8 bytes / 3)``.

        Byte-level BPE tokenizers average about 4 bytes per token on English prose and code and
        about 3 on CJK text, so this errs on the high side for most text. It is not a bound
        (e.g. for random strings); a text over the server's limit is refused by the server,
        which surfaces as :class:`~ragwright.errors.EmbedderError`.
        """
        return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors ``(len(texts), dim)``, float32, unit length, in the order of ``texts``."""
        return self.embed_documents_reporting(texts, _ignored)

    def embed_documents_reporting(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        """`embed_documents`, telling ``embedded`` after each request."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        parts = []
        for batch in self._batches(texts):
            parts.append(self._post(batch))
            embedded(len(batch))
        if not parts:
            width = self._dimension if self._dimension is not None else self.space.dimension
            return np.empty((0, width), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def embed_query(self, text: str) -> Vectors:
        """One vector ``(dim,)``, float32, unit length."""
        result: Vectors = self._post([text])[0]
        return result

    def close(self) -> None:
        """Closes the HTTP connections (a later call opens new ones)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests -----------------------------------------------------------------------------

    def _batches(self, texts: Sequence[str]) -> Iterator[list[str]]:
        batch: list[str] = []
        tokens = 0
        for text in texts:
            estimate = self.count_tokens(text)
            if batch and (len(batch) == self._batch_size or tokens + estimate > MAX_REQUEST_TOKENS):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += estimate
        if batch:
            yield batch

    def _post(self, texts: list[str]) -> Vectors:
        import httpx

        url = f"{self._base_url}/embeddings"
        payload = {"model": self._model, "input": texts}
        client = self._http()
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            try:
                response = client.post(url, json=payload)
            except httpx.TransportError as exc:
                if last:
                    raise EmbedderError(
                        f"cannot reach {url} after {attempt + 1} attempts: {exc!r}"
                    ) from exc
                self._backoff.wait(attempt)
                continue
            if retryable_status(response.status_code) and not last:
                self._backoff.wait(attempt, response.headers)
                continue
            if response.is_error:
                raise EmbedderError(describe_failure(url, response, attempt + 1, self._model))
            return self._vectors(url, response, len(texts))
        raise AssertionError("unreachable")  # pragma: no cover

    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = open_client(self._api_key, self._timeout)
        return self._client

    def _vectors(self, url: str, response: httpx.Response, expected: int) -> Vectors:
        try:
            data = response.json()["data"]
            items = sorted(((int(d["index"]), d["embedding"]) for d in data), key=lambda p: p[0])
            vectors = np.array([embedding for _, embedding in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(f"{url} sent an unexpected response: {exc!r}") from exc
        indices = [index for index, _ in items]
        if indices != list(range(expected)):
            raise EmbedderError(
                f"{url} returned {len(items)} embeddings with indices {indices[:10]} for "
                f"{expected} inputs"
            )
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise EmbedderError(f"{url} returned embeddings of unequal or zero width")
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimension:
            raise EmbedderError(
                f"{url} returned {vectors.shape[1]}-dimensional embeddings for {self._model!r}; "
                f"expected {self._dimension}"
            )
        if not np.isfinite(vectors).all():
            raise EmbedderError(
                f"{url} returned non-finite values (NaN or inf) for {self._model!r}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        result: Vectors = vectors / np.maximum(norms, np.float32(1e-12))
        return result


def _ignored(count: int) -> None:
    """Progress nobody asked for."""
