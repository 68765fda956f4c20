"""`ragwright init`: write a commented ``ragwright.toml`` to start from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragwright.cli._common import console, reports_errors
from ragwright.config import CONFIG_FILE
from ragwright.errors import ConfigError

#: Every setting commented out, at its default or an example: uncomment a line to change it.
TEMPLATE = """\
# ragwright.toml: found by --config, $RAGWRIGHT_CONFIG or the working directory.
# Every setting below is commented out, at its default or, where there is none, an example;
# uncomment a line to change it.
# See docs/answers.md (the [llm] tables) and docs/http-api.md (the [server] table).

[llm]
# The answer engine `ragwright ask` uses without --engine: extractive (offline, no model),
# stuff, map-reduce, refine or flare (these need a model on an OpenAI-compatible server).
# engine = "extractive"
# provider = "openai"
# model = "llama3.1"                       # no default: LLM engines need one
# base_url = "https://api.openai.com/v1"     # Ollama: "http://localhost:11434/v1"
# api_key_env = "OPENAI_API_KEY"             # the environment variable holding the API key
# connect_timeout = 10.0
# read_timeout = 120.0
# max_retries = 3
# retry_backoff = 0.5
# breaker_failures = 5
# breaker_cooldown = 30.0
# max_answer_tokens = 800
# cache = true                               # reuse responses to identical requests

[llm.budget]
# Unlimited unless set: the most LLM calls and tokens one question (request) or one ingest
# run may spend, for example:
# request_calls = 20
# request_tokens = 50000
# ingest_calls = 5000
# ingest_tokens = 5000000

# Prices per million tokens, for the cost ledger in `ragwright stats`:
# [llm.prices."gpt-4o-mini"]
# input = 0.15
# output = 0.60

[server]
# Limits of `ragwright serve`. API keys are added by `ragwright keys add NAME`.
# max_request_kb = 1024
# max_upload_mb = 100
# max_file_mb = 50
# max_files = 100
# max_chunk_chars = 20000
# shutdown_timeout = 60
# Seconds a request's headers may take to arrive, and a body may pause, before the
# connection is cut off (slow clients, slowloris); connections open at once:
# header_timeout = 15
# body_timeout = 30
# max_connections = 256
"""


@reports_errors
def init(
    path: Annotated[Path, typer.Argument(help="The file to write.", dir_okay=False)] = Path(
        CONFIG_FILE
    ),
    force: Annotated[bool, typer.Option(help="Replace the file if it exists.")] = False,
) -> None:
    """Write a commented ragwright.toml listing every setting, to start from."""
    if path.exists() and not force:
        raise ConfigError(f"{path} exists; pass --force to replace it")
    path.write_text(TEMPLATE, encoding="utf-8")
    console.print(f"wrote {escape(str(path))}: uncomment a setting to change it")
