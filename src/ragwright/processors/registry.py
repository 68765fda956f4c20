"""Result processors by registry name, for configuration files.

Options are the processor's constructor arguments; dependencies that are not data (the
``embedder`` of ``mmr`` and ``compress``, the ``store`` of ``neighbours``, the ``documents``
of ``parent_section``) are passed the same way by whoever builds the pipeline. An unknown name
or option is a `~ragwright.errors.ConfigError` that lists the valid ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType

from ragwright.errors import ConfigError, RegistryError
from ragwright.ports import ResultProcessor
from ragwright.processors.compress import ContextCompressor
from ragwright.processors.dedupe import DedupeByKey
from ragwright.processors.mmr import MMR
from ragwright.processors.neighbours import NeighbourContext
from ragwright.processors.parent_section import ParentSection
from ragwright.processors.passage_first import PassageFirst
from ragwright.processors.reorder import LongContextReorder
from ragwright.processors.threshold import SimilarityThreshold
from ragwright.processors.top_n import TopN

RESULT_PROCESSORS: Mapping[str, Callable[..., ResultProcessor]] = MappingProxyType(
    {
        "threshold": SimilarityThreshold,
        "top_n": TopN,
        "mmr": MMR,
        "neighbours": NeighbourContext,
        "dedupe": DedupeByKey,
        "reorder": LongContextReorder,
        "compress": ContextCompressor,
        "parent_section": ParentSection,
        "passage_first": PassageFirst,
    }
)


def create_result_processor(name: str, **options: object) -> ResultProcessor:
    """The result processor registered as ``name``, built with ``options``."""
    factory = RESULT_PROCESSORS.get(name)
    if factory is None:
        valid = ", ".join(RESULT_PROCESSORS)
        raise RegistryError(f"unknown result processor {name!r}; choose one of: {valid}")
    parameters = inspect.signature(factory).parameters
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        raise ConfigError(
            f"result processor {name!r} has no option {', '.join(map(repr, unknown))}; "
            f"its options are: {', '.join(parameters) or '(none)'}"
        )
    missing = [
        key
        for key, parameter in parameters.items()
        if parameter.default is inspect.Parameter.empty and key not in options
    ]
    if missing:
        raise ConfigError(
            f"result processor {name!r} needs {', '.join(map(repr, missing))}; "
            f"its options are: {', '.join(parameters)}"
        )
    return factory(**options)
