"""Test support for ragwright and its plugins: fakes at the ports and contract suites."""

from __future__ import annotations

from ragwright.testing.embedder import HashingEmbedder
from ragwright.testing.llm import ScriptedLLM
from ragwright.testing.openai_server import OpenAIServer, Reply, quoting_responder

__all__ = ["HashingEmbedder", "OpenAIServer", "Reply", "ScriptedLLM", "quoting_responder"]
