"""The ``ragwright.toml`` that ``ragwright init`` writes: every table, every key commented out at
its default, read from the settings classes that hold the defaults (`LLMSettings`,
`SearchRequest`, `ServerSettings`, …), so the file cannot drift from the code. A key without a
default (a model name, a budget) is shown with an example value, marked ``# example``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import fields

from ragwright.answers.extractive import ExtractiveOptions
from ragwright.answers.settings import AnswerSettings
from ragwright.config import ENV_PREFIX, ENV_SEPARATOR
from ragwright.federation.settings import FederationSettings
from ragwright.graph.extractors.llm_settings import LLMExtractionSettings
from ragwright.llms.settings import LLMSettings
from ragwright.pipeline.search.mode_registry import mode_names
from ragwright.pipeline.search.request import SearchRequest
from ragwright.planner.settings import PlannerSettings
from ragwright.server.settings import default_table
from ragwright.stores import option_defaults

EXAMPLE = "  # example"
STORE_NOTES = {
    "sqlite": 'The embedded store (docs/cli.md): durability "normal" or "full", private (owner '
    'only), ann: approximate vector search "auto", "on" or "off" (default: as the index '
    "recorded), ann_ef its beam.",
    "postgresql": "A PostgreSQL store (docs/postgres.md; [store.postgres] is the same table).",
}
#: One line of explanation for the keys that need one (the rest are in docs/*.md).
NOTES = {
    "engine": "extractive (offline, no model), stuff, map-reduce, refine or flare",
    "api_key_env": "the environment variable holding the API key",
    "cache": "reuse responses to identical requests",
    "base_url": 'Ollama: "http://localhost:11434/v1"',
    "graph_context": "give LLM engines the hits' entities and relations (needs a graph)",
    "mode": ", ".join(mode_names()),
    "fusion": "zscore, convex or rrf",
    "per_document": "at most this many chunks of one document in the top k (0: no cap)",
    "rerank": "none or cross-encoder (reorders the first rerank_depth candidates; slower)",
    "classifier": "rules (offline) or llm (one [llm] call a question)",
    "timeout": "seconds each member index has to answer",
    "strict": "true: a member that fails or is late fails the request",
    "header_timeout": "seconds a request's headers may take (slow clients)",
    "body_timeout": "seconds a body may pause between two parts",
}


def template() -> str:
    """The whole file."""
    llm = LLMSettings()
    unset_llm = {"api_key", "request_budget", "ingest_budget", "prices"}
    llm_keys = {f.name: getattr(llm, f.name) for f in fields(LLMSettings)}
    answer = AnswerSettings()
    extraction = LLMExtractionSettings()
    federation = FederationSettings()
    parts = [
        _HEADER,
        _table(
            "llm",
            {k: v for k, v in llm_keys.items() if k not in unset_llm},
            examples={"model": "llama3.1", "requests_per_minute": 500, "tokens_per_minute": 200000},
        ),
        _table(
            "llm.budget",
            {},
            examples={
                "request_calls": 20,
                "request_tokens": 50000,
                "ingest_calls": 5000,
                "ingest_tokens": 5000000,
            },
            about="Unlimited unless set: the most LLM calls and tokens one question (request) "
            "or one ingest run may spend.",
        ),
        _table(
            'llm.prices."gpt-4o-mini"',
            {},
            examples={"input": 0.15, "output": 0.60},
            about="Prices per million tokens of a model, for the cost ledger (ragwright stats).",
            commented_header=True,
        ),
        _table(
            "answer",
            {
                "graph_context": answer.graph_context,
                "graph_entities": answer.graph.max_entities,
                "graph_relations": answer.graph.max_relations,
                "graph_tokens": answer.graph.max_tokens,
            },
        ),
        _table(
            "answer.extractive",
            {f.name: getattr(answer.extractive, f.name) for f in fields(ExtractiveOptions)},
            about="The offline extractive engine's thresholds (docs/answers.md).",
        ),
        _table(
            "search",
            {k: v for k, v in SearchRequest().settings().items() if v is not None},
            about="The defaults of search, ask and /v1/search; flags override them.",
        ),
        _table(
            "planner", {f.name: getattr(PlannerSettings(), f.name) for f in fields(PlannerSettings)}
        ),
        _table(
            "graph.llm",
            {
                "entity_types": list(extraction.ontology.entity_types),
                "relation_types": list(extraction.ontology.relation_types),
                "workers": extraction.workers,
                "max_tokens": extraction.max_tokens,
            },
            about="The LLM graph extractor (ingest --graph --extractor llm).",
        ),
        _table(
            "server",
            default_table(),
            about="Limits of `ragwright serve`. API keys are added by `ragwright keys add NAME`.",
        ),
        _table(
            "federation",
            {"timeout": federation.timeout, "strict": federation.strict},
            examples={"members": ["team=/srv/team/.ragwright", "postgresql://me@db/notes"]},
            about="Several indexes searched as one by serve, mcp and search (docs/scaling.md).",
        ),
        *(
            _table(f"store.{name}", defaults, about=STORE_NOTES.get(name, ""))
            for name, defaults in option_defaults().items()
        ),
        _SOURCES,
    ]
    return "\n".join(parts)


def _table(
    name: str,
    defaults: Mapping[str, object],
    *,
    examples: Mapping[str, object] | None = None,
    about: str = "",
    commented_header: bool = False,
) -> str:
    lines = [f"# [{name}]" if commented_header else f"[{name}]"]
    lines += [f"# {line}" for line in _wrapped(about)] if about else []
    for key, value in defaults.items():
        if value is None or key in (examples or {}):  # unset by default: an example shows it
            continue
        note = f"  # {NOTES[key]}" if key in NOTES else ""
        lines.append(f"# {key} = {toml_value(value)}{note}")
    for key, value in (examples or {}).items():
        lines.append(f"# {key} = {toml_value(value)}{EXAMPLE}")
    return "\n".join(lines) + "\n"


def toml_value(value: object) -> str:
    """``value`` as TOML (the types settings hold)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for the text settings hold
    if isinstance(value, Iterable):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _wrapped(text: str, width: int = 94) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


_HEADER = f"""\
# ragwright.toml: found by --config, $RAGWRIGHT_CONFIG or the working directory.
# Every setting below is commented out at its default (or, marked "example", where there is
# none); uncomment a line to change it. Any setting may also come from the environment,
# {ENV_PREFIX}<TABLE>{ENV_SEPARATOR}<KEY>: {ENV_PREFIX}SEARCH{ENV_SEPARATOR}TOP_K=5,
# {ENV_PREFIX}LLM{ENV_SEPARATOR}BUDGET{ENV_SEPARATOR}REQUEST_CALLS=20. A command-line flag
# wins over the environment, the environment over this file, this file over the defaults.
"""

_SOURCES = """\
# [sources.NAME]
# A source `ragwright sync` keeps the index equal to (docs/sync.md): type and its keys.
# type = "folder"  # example
# path = "./docs"  # example

# [[permissions]]
# Who may read which documents (docs/sync.md): a glob of sources and its principals.
# path = "vault/**"  # example
# principals = ["group:vault"]  # example
"""
