"""Rerankers by name, as ``--rerank NAME``, ``[search] rerank`` and the HTTP ``rerank`` field
spell them. ``none`` turns reranking off (to override a configured default)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from ragwright.errors import RegistryError
from ragwright.ports import Reranker
from ragwright.rerankers.shipped import ms_marco_cross_encoder

NONE = "none"

#: Only rerankers that need nothing but their name (an LLM reranker needs a model: build it
#: and pass it as a processor object).
RERANKERS: Mapping[str, Callable[[], Reranker]] = MappingProxyType(
    {"cross-encoder": ms_marco_cross_encoder}
)


def reranker_names() -> tuple[str, ...]:
    """The names a search may ask for, ``none`` included."""
    return (NONE, *RERANKERS)


def checked_reranker_name(value: object) -> str | None:
    """``value`` as a reranker name (None for ``none`` or None); else a `RegistryError`."""
    if value is None:
        return None
    name = value.strip().lower() if isinstance(value, str) else value
    if name == NONE:
        return None
    if name not in RERANKERS:
        raise RegistryError(
            f"unknown reranker {value!r}; choose one of: {', '.join(reranker_names())}"
        )
    return str(name)


def create_reranker(name: str) -> Reranker:
    """The reranker registered as ``name``."""
    checked = checked_reranker_name(name)
    if checked is None:
        raise RegistryError(f"{name!r} names no reranker; choose one of: {', '.join(RERANKERS)}")
    return RERANKERS[checked]()
