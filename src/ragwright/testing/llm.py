"""A fake at the `LLM` port: scripted replies, every conversation recorded."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ragwright.models import Usage
from ragwright.ports import ChatMessage, Completion

_PIECES = re.compile(r"\S+\s*|\s+")


class ScriptedLLM:
    """An `LLM` that returns its scripted replies in turn and records every conversation it
    was sent in ``calls`` (and the keyword arguments of each in ``options``).

    A reply is a string, a whole `Completion` (for logprobs or exact usage) or an exception,
    which is raised instead. Usage is estimated at 4 characters per token. ``stream`` yields a
    reply word by word, then its `Completion`."""

    def __init__(self, *replies: str | Completion | Exception, model: str = "scripted") -> None:
        self.replies = list(replies)
        self.calls: list[list[ChatMessage]] = []
        self.options: list[dict[str, Any]] = []
        self._model = model

    @property
    def model(self) -> str:
        return self._model

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        json_mode: bool = False,
        logprobs: bool = False,
    ) -> Completion:
        options = {"max_tokens": max_tokens, "temperature": temperature}
        return self._next(messages, options | {"json_mode": json_mode, "logprobs": logprobs})

    def stream(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> Iterator[str | Completion]:
        options = {"max_tokens": max_tokens, "temperature": temperature, "stream": True}
        completion = self._next(messages, options)
        yield from _PIECES.findall(completion.text)
        yield completion

    def _next(self, messages: Sequence[ChatMessage], options: dict[str, Any]) -> Completion:
        self.calls.append(list(messages))
        self.options.append(options)
        if not self.replies:
            raise AssertionError("ScriptedLLM ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, Completion):
            return reply
        prompt = sum(len(m.content) for m in messages)
        usage = Usage(1, math.ceil(prompt / 4), math.ceil(len(reply) / 4))
        return Completion(reply, self._model, usage, "stop")
