"""Graph extractors by name, from the ``ragwright.extractors`` entry points (the built-ins use
the same door as a plugin). A spec names one and its argument::

    spacy                 spaCy NER (the offline default; needs the ``graph`` extra)
    spacy:noun-chunks     spaCy NER and filtered noun chunks
    rules                 capitalized n-grams, acronyms, quoted titles (no dependency)

`default_extractor` is spaCy where the extra is installed, else the rules.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, MissingDependencyError, RegistryError
from ragwright.ports import Extractor

GROUP = "ragwright.extractors"
DEFAULT_EXTRACTOR = "spacy"
FALLBACK_EXTRACTOR = "rules"


def extractor_names() -> list[str]:
    return sorted(_registry())


def create_extractor(spec: str = DEFAULT_EXTRACTOR) -> Extractor:
    """The `Extractor` a spec names; `MissingDependencyError` when its extra is missing."""
    name, _, argument = spec.strip().partition(":")
    registry = _registry()
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none (is ragwright installed?)"
        raise RegistryError(f"unknown extractor {name!r} in spec {spec!r}; known: {known}")
    factory = registry[name].load()
    from_spec = getattr(factory, "from_spec", None)
    if callable(from_spec):
        extractor = from_spec(argument)
    elif argument:
        raise ConfigError(f"the extractor {name!r} takes no argument; got {spec!r}")
    else:
        extractor = factory()
    if not isinstance(extractor, Extractor):
        raise RegistryError(f"the extractor {name!r} ({registry[name].value}) is not an Extractor")
    return extractor


def default_extractor() -> Extractor:
    """spaCy when the ``graph`` extra is installed, else the dependency-free rules."""
    try:
        return create_extractor(DEFAULT_EXTRACTOR)
    except MissingDependencyError:
        return create_extractor(FALLBACK_EXTRACTOR)


def _registry() -> dict[str, EntryPoint]:
    return plugins(GROUP, "extractor")
