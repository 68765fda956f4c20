"""The base of the shipped embedders (``minilm``, ``bge-small``): an `OnnxEmbedder` with fixed
files and settings, named by a spec that takes no argument. Only speed and memory settings
(`Tuning`) can change, so the vectors, and the spec, are always the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self

from ragwright.embedders.onnx import OnnxEmbedder
from ragwright.errors import ConfigError
from ragwright.models import EmbeddingSpace
from ragwright.ports import EmbeddedCount, Vectors


class FixedOnnxEmbedder:
    """Delegates to ``_onnx``, which a subclass's constructor makes."""

    #: The spec that names it (``ragwright ingest --embedder NAME``).
    name: ClassVar[str]
    _onnx: OnnxEmbedder

    @classmethod
    def from_spec(cls, argument: str) -> Self:
        """The embedder the spec ``name`` names; it takes no argument."""
        if argument:
            raise ConfigError(
                f"the {cls.name} embedder takes no argument; got '{cls.name}:{argument}'"
            )
        return cls()

    @property
    def spec(self) -> str:
        return self.name

    @property
    def space(self) -> EmbeddingSpace:
        return self._onnx.space

    @property
    def max_tokens(self) -> int:
        return self._onnx.max_tokens

    def count_tokens(self, text: str) -> int:
        return self._onnx.count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._onnx.embed_documents(texts)

    def embed_documents_reporting(self, texts: Sequence[str], embedded: EmbeddedCount) -> Vectors:
        return self._onnx.embed_documents_reporting(texts, embedded)

    def embed_query(self, text: str) -> Vectors:
        return self._onnx.embed_query(text)
