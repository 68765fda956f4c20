"""Argument checks and the one way reranked hits are built. The port is `ragwright.ports.Reranker`
and the error `ragwright.errors.RerankerError` (both re-exported by ``ragwright.rerankers``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ragwright.errors import ConfigError
from ragwright.models import Hit, Scale


def check_top_k(owner: str, top_k: object) -> int | None:
    """``top_k`` as None (keep all) or an int >= 0; anything else is a `ConfigError`."""
    if top_k is None:
        return None
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
        raise ConfigError(f"{owner}: top_k must be None or an integer >= 0; got {top_k!r}")
    return top_k


def check_positive(owner: str, name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{owner}: {name} must be a positive integer; got {value!r}")
    return value


def reranked(
    hits: Sequence[Hit], order: Sequence[int], scores: Sequence[float], top_k: int | None
) -> list[Hit]:
    """``hits`` taken in ``order`` (indexes into ``hits``) with ``scores[i]`` for the i-th
    hit of the new order, on `Scale.FUSED`, cut to ``top_k``."""
    kept = order if top_k is None else order[:top_k]
    return [
        dataclasses.replace(hits[index], score=float(scores[position]), scale=Scale.FUSED)
        for position, index in enumerate(kept)
    ]
