"""A fake at the `LLM` port: scripted replies, every conversation recorded."""

from __future__ import annotations

from collections.abc import Sequence

from ragwright.ports import ChatMessage


class ScriptedLLM:
    """An `LLM` that returns its scripted replies in turn (an exception in the script is
    raised instead) and records every conversation it was sent in ``calls``."""

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.calls: list[list[ChatMessage]] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 512, temperature: float = 0.0
    ) -> str:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("ScriptedLLM ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply
