"""Rerankers: reorder retrieved hits with a stronger, slower relevance model.

Two adapters behind one port, `Reranker`, each also usable as a result processor:

- `CrossEncoderReranker`: an ONNX cross-encoder, the shipped one (`ms_marco_cross_encoder`:
  ms-marco-MiniLM-L-12-v2, offline) or one you supply (``from_folder(path)``); its
  ``score(query, passages)`` is also the `PassageScorer` port;
- `LLMListwiseReranker`: any `ragwright.ports.LLM`, asked for the order of numbered passages.

A search names a reranker with ``rerank = "cross-encoder"`` (`ragwright.rerankers.registry`).
Reranked hits are on `Scale.FUSED`. See ``docs/rerankers.md``.
"""

from __future__ import annotations

from ragwright.errors import RerankerError
from ragwright.ports import PassageScorer, Reranker
from ragwright.rerankers.cross_encoder import CrossEncoderReranker
from ragwright.rerankers.llm_listwise import LLMListwiseReranker, RerankResult
from ragwright.rerankers.shipped import ms_marco_cross_encoder

__all__ = [
    "CrossEncoderReranker",
    "LLMListwiseReranker",
    "PassageScorer",
    "RerankResult",
    "Reranker",
    "RerankerError",
    "ms_marco_cross_encoder",
]
