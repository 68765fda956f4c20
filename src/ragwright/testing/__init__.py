"""Test support for ragwright and its plugins: fakes at the ports and contract suites."""

from __future__ import annotations

from ragwright.testing.embedder import HashingEmbedder
from ragwright.testing.llm import ScriptedLLM

__all__ = ["HashingEmbedder", "ScriptedLLM"]
