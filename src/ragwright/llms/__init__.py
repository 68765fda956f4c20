"""Chat models behind the `ragwright.ports.LLM` port, and what wraps them.

Providers are found by name in the ``ragwright.llms`` entry-point group, the door a third-party
plugin uses too. ``openai`` (`OpenAIChat`) speaks to any OpenAI-compatible server. A provider's
entry point names a class with a ``from_settings(LLMSettings)`` classmethod.

Every provider is rate limited (`ragwright.llms.rate_limit`): the OpenAI adapter limits each
attempt itself; `create_llm` wraps any other provider in `RateLimitedLLM`. Around that, per
scope: `BudgetedLLM` (call and token limits shared by every component of a
request or ingest run), `CachedLLM` (the response cache) and `LedgerLLM` (the cost ledger).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint

from ragwright._plugins import plugins
from ragwright.errors import ConfigError, RegistryError
from ragwright.llms.rate_limit import RateLimit, RateLimitedLLM, shared_limiter
from ragwright.llms.settings import LLMSettings
from ragwright.ports import LLM

GROUP = "ragwright.llms"


def llm_names() -> list[str]:
    """The registered LLM provider names, sorted."""
    return sorted(_registry())


def create_llm(settings: LLMSettings) -> LLM:
    """The provider ``settings.provider`` names, configured by ``settings``."""
    registry = _registry()
    entry = registry.get(settings.provider)
    if entry is None:
        known = ", ".join(sorted(registry)) or "none (is ragwright installed?)"
        raise RegistryError(f"unknown LLM provider {settings.provider!r}; known: {known}")
    if not settings.model:
        raise ConfigError(
            "no LLM model is configured: pass --model or set model in the [llm] table of "
            "ragwright.toml (the extractive engine needs no LLM)"
        )
    try:
        factory = entry.load()
    except ImportError as exc:
        raise RegistryError(f"the LLM provider {entry.name!r} cannot be imported: {exc}") from exc
    llm = factory.from_settings(settings)
    if not isinstance(llm, LLM):
        raise RegistryError(f"the LLM provider {entry.name!r} ({entry.value}) is not an LLM")
    if getattr(llm, "rate_limiter", None) is not None:
        return llm  # it limits its own requests (the OpenAI adapter: every attempt)
    limit = RateLimit(settings.requests_per_minute, settings.tokens_per_minute)
    limiter = shared_limiter(settings.provider, settings.base_url, settings.model, limit)
    return RateLimitedLLM(llm, limiter)


def _registry() -> dict[str, EntryPoint]:
    return plugins(GROUP, "LLM")


__all__ = ["LLMSettings", "create_llm", "llm_names"]
