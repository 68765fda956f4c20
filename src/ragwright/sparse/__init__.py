"""The sparse learned-term arm (SPLADE-style): texts become weights over a model's vocabulary,
stored per chunk and searched by inner product, fused with the other arms like BM25 and vectors.

Sparse encoders are found by name in the ``ragwright.sparse_encoders`` entry-point group, the
door a third-party plugin uses too. A spec names one and its argument::

    splade:/path/to/folder        an ONNX masked-language model (model.onnx, tokenizer.json)

No package on PyPI ships such weights today, so an index has no sparse arm unless one is given
(``ragwright ingest --sparse splade:FOLDER``), and hybrid search leaves it out until
``sparse_weight`` > 0 (see docs/processors.md, "Sparse learned terms").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.models.sparse import SparseVector

if TYPE_CHECKING:
    from ragwright.ports import SparseEncoder

GROUP = "ragwright.sparse_encoders"


def create_sparse_encoder(spec: str) -> SparseEncoder:
    """The sparse encoder a spec names (see the module docstring); nothing loads until use."""
    from ragwright.ports import SparseEncoder  # ports imports this package's vector

    name, _, argument = spec.strip().partition(":")
    registry = plugins(GROUP, "sparse encoder")
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none (is ragwright installed?)"
        raise RegistryError(f"unknown sparse encoder {name!r} in spec {spec!r}; known: {known}")
    try:
        factory = registry[name].load()
    except ImportError as exc:
        raise RegistryError(f"the sparse encoder {name!r} cannot be imported: {exc}") from exc
    from_spec = getattr(factory, "from_spec", None)
    if callable(from_spec):
        encoder = from_spec(argument)
    elif argument:
        raise ConfigError(f"the sparse encoder {name!r} takes no argument; got {spec!r}")
    else:
        encoder = factory()
    if not isinstance(encoder, SparseEncoder):
        raise RegistryError(f"the sparse encoder {name!r} is not a SparseEncoder")
    return encoder


__all__ = ["SparseVector", "create_sparse_encoder"]
