"""The response cache: a completion is stored under the hash of everything that shapes it
(model, messages, max_tokens, temperature, JSON mode, logprobs), so asking again costs nothing.

Repeated evaluation runs and repeated questions are answered from the index's SQLite (see
`ragwright.ports.LLMRecords`). A cached completion comes back with ``cached`` set and usage
``Usage(cached_calls=1)``: it spent no tokens, so budgets and the ledger do not count it. A
completion cut short by its token limit (``finish_reason == "length"``) is not stored: it may
have been capped by a budget and would be wrong for a later, richer request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ragwright.llms.wrapper import WrappedLLM
from ragwright.models import Usage
from ragwright.ports import LLM, ChatMessage, Completion, ResponseCache

CACHED = Usage(cached_calls=1)


def cache_key(model: str, messages: Sequence[ChatMessage], **parameters: object) -> str:
    """The sha256 of the canonical JSON of the model, the messages and the parameters."""
    canonical = json.dumps(
        {
            "model": model,
            "messages": [[m.role, m.content] for m in messages],
            "parameters": parameters,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedLLM(WrappedLLM):
    """An `LLM` that answers repeated requests from a `ResponseStore`; ``hits`` counts the
    requests it answered."""

    def __init__(self, llm: LLM, store: ResponseCache) -> None:
        super().__init__(llm)
        self.store = store
        self.hits = 0

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        key = self._key(messages, max_tokens, temperature, json_mode, logprobs)
        hit = self._hit(key)
        if hit is not None:
            return hit
        completion = super().chat(
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            json_mode=json_mode,
            logprobs=logprobs,
        )
        self._put(key, completion)
        return completion

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        key = self._key(messages, max_tokens, temperature, False, False)
        hit = self._hit(key)
        if hit is not None:
            if hit.text:
                yield hit.text
            yield hit
            return
        for item in super().stream(messages, max_tokens=max_tokens, temperature=temperature):
            if isinstance(item, Completion):
                self._put(key, item)
            yield item

    def _key(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        temperature: float,
        json_mode: bool,
        logprobs: bool,
    ) -> str:
        return cache_key(
            self.llm.model,
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            json_mode=json_mode,
            logprobs=logprobs,
        )

    def _hit(self, key: str) -> Completion | None:
        """The stored completion for ``key``, marked cached and free of usage, if any."""
        hit = self.store.get_response(key)
        if hit is None:
            return None
        self.hits += 1
        return replace(hit, cached=True, usage=CACHED)

    def _put(self, key: str, completion: Completion) -> None:
        if completion.finish_reason != "length" and not completion.cached:
            self.store.put_response(key, completion)
