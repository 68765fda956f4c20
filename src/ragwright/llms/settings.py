"""The ``[llm]`` table of ``ragwright.toml``: which model, where, how patient, what it may spend.

::

    [llm]
    provider = "openai"                 # a ragwright.llms entry point; "openai" covers every
    model = "gpt-4o-mini"               # OpenAI-compatible server (Ollama, vLLM, LM Studio, …)
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"      # the variable holding the key (or api_key = "...")
    engine = "stuff"                    # the default answer engine of `ragwright ask`
    connect_timeout = 10.0
    read_timeout = 120.0
    max_retries = 3
    retry_backoff = 0.5                 # first backoff in seconds; doubles, with jitter
    breaker_failures = 5                # consecutive failures that open the circuit breaker
    breaker_cooldown = 30.0             # seconds before a trial call is let through
    max_answer_tokens = 800
    cache = true                        # the response cache in the index (false: opt out)
    requests_per_minute = 500           # client-side limits shared by every caller in the
    tokens_per_minute = 200000          # process (absent: unlimited); see llms/rate_limit.py

    [llm.budget]                        # absent: unlimited
    request_calls = 20
    request_tokens = 50000
    ingest_calls = 5000
    ingest_tokens = 5000000

    [llm.prices."gpt-4o-mini"]          # per million tokens, for the cost ledger
    input = 0.15
    output = 0.60
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from ragwright.config import Config
from ragwright.errors import ConfigError
from ragwright.models import Usage

#: Keys whose default is None but whose value is a positive integer.
_OPTIONAL_COUNTS = frozenset({"requests_per_minute", "tokens_per_minute"})
ENGINES = ("extractive", "stuff", "map-reduce", "refine", "flare")
_CHOICES = "choose from " + ", ".join(ENGINES)


def unknown_engine(name: str) -> str:
    """The message for an engine name not in `ENGINES`, the same on every surface."""
    return f"unknown answer engine {name!r}; {_CHOICES}"


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits on LLM use for one scope (one request, one ingest run); None is unlimited."""

    max_calls: int | None = None
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Price:
    """Cost per million prompt (``input``) and completion (``output``) tokens."""

    input: float
    output: float

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / 1e6


@dataclass(frozen=True, slots=True)
class LLMSettings:
    provider: str = "openai"
    model: str = ""
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    engine: str = "extractive"
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 3
    retry_backoff: float = 0.5
    breaker_failures: int = 5
    breaker_cooldown: float = 30.0
    max_answer_tokens: int = 800
    cache: bool = True
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    request_budget: Budget = Budget()
    ingest_budget: Budget = Budget()
    prices: dict[str, Price] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Config) -> LLMSettings:
        """The settings in ``config``'s ``[llm]`` table; unknown keys and wrong types are
        `ConfigError`s naming the file and key."""
        table = dict(config.section("llm"))
        where = f"{config.where} [llm]"
        budget = _table(table.pop("budget", {}), f"{where} budget")
        prices = _table(table.pop("prices", {}), f"{where} prices")
        known = {f.name for f in fields(cls)} - {"request_budget", "ingest_budget", "prices"}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ConfigError(
                    f"{where}: unknown key {key!r}; known: {', '.join(sorted(known))}"
                )
            if key in _OPTIONAL_COUNTS:
                values[key] = _count(key, value, where)
            else:
                values[key] = _checked(key, value, getattr(cls(), key), where)
        if values.get("engine", "extractive") not in ENGINES:
            raise ConfigError(f"{where}: {unknown_engine(values['engine'])}")
        settings = cls(**values)
        return replace(
            settings,
            request_budget=_budget(budget, "request", where),
            ingest_budget=_budget(budget, "ingest", where),
            prices={model: _price(raw, f"{where} prices.{model}") for model, raw in prices.items()},
        ).checked()

    def checked(self) -> LLMSettings:
        if self.engine not in ENGINES:
            raise ConfigError(unknown_engine(self.engine))
        return self

    def with_overrides(self, **overrides: Any) -> LLMSettings:
        """These settings with the non-None ``overrides`` (command-line options) applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None}).checked()


def _table(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table")
    return value


def _checked(key: str, value: object, default: object, where: str) -> object:
    """``value`` if it has the type of the default (ints pass as floats; None defaults take
    strings); otherwise a `ConfigError`."""
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and isinstance(default, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and value >= 0
        value = float(value) if ok else value  # type: ignore[arg-type]
    elif isinstance(default, int):
        ok = isinstance(value, int) and value >= 0
    else:
        ok = isinstance(value, str)
    if not ok:
        raise ConfigError(f"{where}: {key} = {value!r} has the wrong type or sign")
    return value


def _count(key: str, value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: {key} must be an integer >= 1 (leave it out: unlimited)")
    return value


def _budget(table: dict[str, Any], scope: str, where: str) -> Budget:
    limits = {}
    for kind in ("calls", "tokens"):
        value = table.get(f"{scope}_{kind}")
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ConfigError(f"{where} budget: {scope}_{kind} must be an integer >= 1")
        limits[kind] = value
    unknown = set(table) - {f"{s}_{k}" for s in ("request", "ingest") for k in ("calls", "tokens")}
    if unknown:
        raise ConfigError(f"{where} budget: unknown keys {sorted(unknown)}")
    return Budget(limits["calls"], limits["tokens"])


def _price(raw: object, where: str) -> Price:
    table = _table(raw, where)
    try:
        price = Price(float(table["input"]), float(table["output"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where} needs numbers input and output (per million tokens)") from exc
    if set(table) - {"input", "output"} or price.input < 0 or price.output < 0:
        raise ConfigError(f"{where} takes only input and output, both >= 0")
    return price
