"""Embedders: texts in, vectors of one embedding space out.

Embedders are found by name in the ``ragwright.embedders`` entry-point group, the same door a
third-party plugin uses. A spec string names one and its argument::

    minilm                         the offline default: all-MiniLM-L6-v2, int8 ONNX (no argument)
    bge-small                      BAAI bge-small-en-v1.5, int8 ONNX, offline (no argument)
    onnx:/path/to/folder           an ONNX sentence-transformer folder (model.onnx, tokenizer.json)
    openai:MODEL[@BASE_URL]        an OpenAI-compatible /embeddings endpoint
    hashing[:DIM]                  deterministic feature hashing, for tests

Every embedder's ``spec`` property gives back the string that recreates it, which an index
records. A plugin's entry point names a class or factory; when it has a ``from_spec(argument)``
classmethod, that receives the text after the first ``:``, otherwise it is called without
arguments and a spec with an argument is refused.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.ports import Embedder

DEFAULT_EMBEDDER = "minilm"
GROUP = "ragwright.embedders"


def embedder_names() -> list[str]:
    """The registered embedder names, sorted."""
    return sorted(_registry())


def create_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder a spec names (see the module docstring). Nothing heavy loads until use."""
    name, _, argument = spec.strip().partition(":")
    registry = _registry()
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none (is ragwright installed?)"
        raise RegistryError(f"unknown embedder {name!r} in spec {spec!r}; known: {known}")
    try:
        factory = registry[name].load()
    except ImportError as exc:
        raise RegistryError(
            f"the embedder {name!r} ({registry[name].value}) cannot be imported: {exc}"
        ) from exc
    from_spec = getattr(factory, "from_spec", None)
    if callable(from_spec):
        embedder = from_spec(argument)
    elif argument:
        raise ConfigError(f"the embedder {name!r} takes no argument; got {spec!r}")
    else:
        embedder = factory()
    if not isinstance(embedder, Embedder):
        raise RegistryError(f"the embedder {name!r} ({registry[name].value}) is not an Embedder")
    return embedder


def _registry() -> dict[str, EntryPoint]:
    return plugins(GROUP, "embedder")


__all__ = ["DEFAULT_EMBEDDER", "create_embedder", "embedder_names"]
