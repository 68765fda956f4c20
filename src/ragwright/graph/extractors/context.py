"""`ExtractorContext`: what the index creating an extractor lends it, so that every extractor,
built-in or plugin, is created the same way (`ragwright.graph.registry`).

An extractor that calls a model needs the index's LLM session (its budget, ledger, response
cache and prices, scope ``graph``), its configuration (``[graph.llm]``) and its boundary key
(so a re-run's prompts are the same and answered from the cache). The session is opened only
when an extractor asks for it: creating the spaCy extractor opens no LLM. Without an index
(`standalone`), asking for a session is a `ConfigError` naming what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.llms.session import LLMSession


def _no_session() -> LLMSession:
    raise ConfigError(
        "this extractor calls a language model and needs an index's LLM session (budget, "
        "ledger, cache); create it through an Index (`ragwright graph build --extractor llm`, "
        "or Index.build_graph(extractor='llm'))"
    )


def _no_key() -> bytes | None:
    return None


@dataclass(frozen=True, slots=True)
class ExtractorContext:
    """``config``: the index's configuration; ``llm_session()`` opens a session of scope
    ``graph``; ``boundary_key()`` is the index's prompt boundary key (None: a fresh one each
    run)."""

    config: Config
    llm_session: Callable[[], LLMSession] = _no_session
    boundary_key: Callable[[], bytes | None] = _no_key

    @classmethod
    def standalone(cls) -> ExtractorContext:
        """No index: default configuration, no LLM session."""
        return cls(Config())
