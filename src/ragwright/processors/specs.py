"""Result processors as configuration data: a name and its options, checked when the request
is made and built when the search runs, with the index's own parts for what is not data.

Spelled in ragwright.toml's ``[search]`` table (and an eval configuration) as a list of names
or tables, and on the command line as ``--processor NAME[:KEY=VALUE,...]`` (repeatable)::

    [search]
    processors = ["dedupe", { name = "compress", max_sentences = 1 }]

    ragwright search "…" --processor top_n:n=5 --processor parent_section

Values on the command line are read as TOML values (``1``, ``0.25``, ``true``, ``"source"``;
a bare word is a string). The ``embedder`` of ``mmr`` and ``compress``, the ``store`` of
``neighbours`` and the ``documents`` of ``parent_section`` are the index's.
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragwright.errors import ConfigError, RegistryError
from ragwright.ports import ChunkLookup, DocumentLookup, Embedder, ResultProcessor
from ragwright.processors.registry import RESULT_PROCESSORS, create_result_processor

#: Options the index supplies: never configuration data.
INJECTED = ("embedder", "store", "documents")


@dataclass(frozen=True)
class ProcessorSpec:
    """One result processor by registry name with its data options, checked when made."""

    name: str
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        factory = RESULT_PROCESSORS.get(self.name)
        if factory is None:
            valid = ", ".join(RESULT_PROCESSORS)
            raise RegistryError(f"unknown result processor {self.name!r}; choose one of: {valid}")
        known = [p for p in inspect.signature(factory).parameters if p not in INJECTED]
        unknown = sorted(set(self.options) - set(known))
        if unknown:
            raise ConfigError(
                f"result processor {self.name!r} has no option {', '.join(map(repr, unknown))}; "
                f"its options are: {', '.join(known) or '(none)'}"
            )
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @classmethod
    def parse(cls, text: str) -> ProcessorSpec:
        """``NAME[:KEY=VALUE,...]`` (the command line's spelling)."""
        name, _, rest = text.strip().partition(":")
        options: dict[str, Any] = {}
        for pair in filter(None, (p.strip() for p in rest.split(","))):
            key, equals, value = pair.partition("=")
            if not equals or not key.strip():
                raise ConfigError(f"processor option {pair!r} must be KEY=VALUE (in {text!r})")
            options[key.strip()] = _value(value.strip())
        return cls(name.strip(), options)

    @classmethod
    def of(cls, raw: object) -> ProcessorSpec:
        """A spec from a name, a ``NAME:...`` string, a table with a ``name``, or a spec."""
        if isinstance(raw, ProcessorSpec):
            return raw
        if isinstance(raw, str):
            return cls.parse(raw)
        if isinstance(raw, Mapping) and isinstance(raw.get("name"), str):
            return cls(raw["name"], {k: v for k, v in raw.items() if k != "name"})
        raise ConfigError(
            "a result processor is a name ('dedupe'), 'NAME:KEY=VALUE,...' or a table with a "
            f"name and its options; got {raw!r}"
        )

    def plain(self) -> dict[str, Any]:
        """As TOML spells it."""
        return {"name": self.name, **self.options}

    def build(
        self,
        *,
        embedder: Callable[[], Embedder],
        store: ChunkLookup,
        documents: DocumentLookup,
    ) -> ResultProcessor:
        """The processor, given the index's parts where its constructor takes them
        (``embedder`` is asked for only then: a BM25 search never loads a model for it)."""
        parameters = inspect.signature(RESULT_PROCESSORS[self.name]).parameters
        given: dict[str, object] = {"store": store, "documents": documents}
        if "embedder" in parameters:
            given["embedder"] = embedder()
        given = {key: value for key, value in given.items() if key in parameters}
        return create_result_processor(self.name, **given, **self.options)


def processor_specs(raw: object) -> tuple[ProcessorSpec, ...]:
    """Specs from a list (TOML) or one string; anything else is a `ConfigError`."""
    if isinstance(raw, str | ProcessorSpec):
        return (ProcessorSpec.of(raw),)
    if isinstance(raw, list | tuple):
        return tuple(ProcessorSpec.of(item) for item in raw)
    raise ConfigError(f"processors must be a list of result processors; got {raw!r}")


def _value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string
