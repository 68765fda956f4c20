"""Fakes for the Ray ingest tests, at module level in a module of their own: the workers (and
their parse child processes) import them by name, with this folder on their PYTHONPATH."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

from ragwright.models import EmbeddingSpace, ParsedDocument
from ragwright.ports import Vectors
from ragwright.testing import HashingEmbedder


class KillOnceEmbedder:
    """The hashing embedder, except that the first call made while ``marker`` exists (in any
    process) removes it and kills that process, as the OOM killer or a lost node would. It has
    no spec, so it travels to the workers pickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker
        self.inner = HashingEmbedder()

    @property
    def space(self) -> EmbeddingSpace:
        return self.inner.space

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        try:
            self.marker.unlink()
        except FileNotFoundError:
            return self.inner.embed_documents(texts)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


class CrashingParser:
    """Takes its process down the way a crashing C library does."""

    extensions: tuple[str, ...] = (".crash",)
    content_types: tuple[str, ...] = ()

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")
