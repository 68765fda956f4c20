"""Extractors by name, from the ``ragwright.extractors`` entry-point group (the door a
third-party extractor uses too). A spec is ``NAME`` or ``NAME:ARGUMENT``. Every factory is
created the same way, built-in or plugin, whichever it offers first:

- ``from_context(context, argument)``: the `ExtractorContext` the index lends (its
  configuration, its LLM session opened on demand, its boundary key) and the argument;
- ``from_spec(argument)``: the argument alone;
- the factory called with nothing (no argument allowed).

An extractor whose optional extra is not installed fails here, with the install line, before
any chunk is read."""

from __future__ import annotations

from importlib.metadata import EntryPoint

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, MissingDependencyError, RegistryError
from ragwright.graph.extractors.context import ExtractorContext
from ragwright.ports import Extractor

GROUP = "ragwright.extractors"
DEFAULT_EXTRACTOR = "spacy"
#: What `default_extractor` falls back to when the ``graph`` extra is missing (no dependency).
FALLBACK_EXTRACTOR = "rules"
#: The extra each built-in extractor needs, for the message when it is missing.
EXTRAS = {"spacy": "graph"}


def extractor_names() -> list[str]:
    return sorted(_registry())


def create_extractor(
    spec: str = DEFAULT_EXTRACTOR, context: ExtractorContext | None = None
) -> Extractor:
    """The `Extractor` a spec names, given ``context`` (default: `ExtractorContext.standalone`,
    no index); `MissingDependencyError` when its extra is missing."""
    name, _, argument = spec.strip().partition(":")
    registry = _registry()
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none (is ragwright installed?)"
        raise RegistryError(f"unknown extractor {name!r}; known: {known}")
    try:
        factory = registry[name].load()
        from_context = getattr(factory, "from_context", None)
        from_spec = getattr(factory, "from_spec", None)
        if callable(from_context):
            extractor = from_context(context or ExtractorContext.standalone(), argument)
        elif callable(from_spec):
            extractor = from_spec(argument)
        elif argument:
            raise ConfigError(f"the extractor {name!r} takes no argument; got {spec!r}")
        else:
            extractor = factory()
    except ImportError as error:
        raise MissingDependencyError(f"the {name} extractor", _install_line(name)) from error
    if not isinstance(extractor, Extractor):
        raise RegistryError(f"the extractor {name!r} ({registry[name].value}) is not an Extractor")
    return extractor


def default_extractor() -> Extractor:
    """spaCy when the ``graph`` extra is installed, else the dependency-free rules."""
    try:
        return create_extractor(DEFAULT_EXTRACTOR)
    except MissingDependencyError:
        return create_extractor(FALLBACK_EXTRACTOR)


def _install_line(name: str) -> str:
    extra = EXTRAS.get(name)
    return f"pip install 'ragwright[{extra}]'" if extra else f"install the plugin providing {name}"


def _registry() -> dict[str, EntryPoint]:
    return plugins(GROUP, "extractor")
