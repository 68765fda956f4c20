"""Rerankers: reorder retrieved hits with a stronger, slower relevance model.

Two adapters behind one port, `Reranker`, each also usable as a result processor:

- `CrossEncoderReranker`: an ONNX cross-encoder you supply (``from_folder(path)``);
- `LLMListwiseReranker`: any `ragwright.ports.LLM`, asked for the order of numbered passages.

Neither is part of the default offline configuration. Reranked hits are on `Scale.FUSED`. See
``docs/rerankers.md``.
"""

from __future__ import annotations

from ragwright.errors import RerankerError
from ragwright.ports import Reranker
from ragwright.rerankers.cross_encoder import CrossEncoderReranker
from ragwright.rerankers.llm_listwise import LLMListwiseReranker, RerankResult

__all__ = [
    "CrossEncoderReranker",
    "LLMListwiseReranker",
    "RerankResult",
    "Reranker",
    "RerankerError",
]
