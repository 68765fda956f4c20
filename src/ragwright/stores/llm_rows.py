"""A cached LLM completion as the JSON both stores keep (`llm_cache.completion`): one shape,
so that a response cached by one store reads back the same from the other (`migrate`)."""

from __future__ import annotations

from typing import Any

from ragwright.models import Usage
from ragwright.ports import Completion, TokenLogprob


def completion_json(completion: Completion) -> dict[str, Any]:
    """A completion as the JSON object both stores keep in their response cache."""
    logprobs = completion.logprobs
    return {
        "text": completion.text,
        "model": completion.model,
        "finish_reason": completion.finish_reason,
        "logprobs": None if logprobs is None else [[t.token, t.logprob] for t in logprobs],
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
    }


def completion_of(raw: dict[str, Any]) -> Completion:
    """The completion a cached JSON object (`completion_json`) holds."""
    logprobs = raw.get("logprobs")
    return Completion(
        text=str(raw["text"]),
        model=str(raw["model"]),
        usage=Usage(1, int(raw["prompt_tokens"]), int(raw["completion_tokens"])),
        finish_reason=raw.get("finish_reason"),
        logprobs=None if logprobs is None else tuple(TokenLogprob(t, p) for t, p in logprobs),
    )
