"""`ragwright mcp`: serve the index to MCP clients (AI assistants) over stdio."""

from __future__ import annotations

from ragwright.cli._common import (
    DEFAULT_INDEX,
    CollectionOption,
    ConfigOption,
    EmbedderOption,
    IndexOption,
    PrincipalOption,
    caller_of,
    reports_errors,
)
from ragwright.config import load_config
from ragwright.errors import MissingDependencyError
from ragwright.federation import Federation, FederationSettings
from ragwright.index import Index
from ragwright.llms.settings import LLMSettings
from ragwright.models import DEFAULT_COLLECTION


@reports_errors
def mcp(
    index: IndexOption = DEFAULT_INDEX,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
    config: ConfigOption = None,
    principal: PrincipalOption = None,
) -> None:
    """Run an MCP server on stdin/stdout with the tools search, ask, get_chunk, get_document
    and list_sources (see docs/mcp.md). Document text in results is marked untrusted. With a
    [federation] table in ragwright.toml, the tools search its indexes as one instead."""
    configuration = load_config(config)
    llm_settings = LLMSettings.from_config(configuration)
    try:
        from ragwright.mcp_server import build_federation_server, build_server
    except ImportError as error:
        raise MissingDependencyError("ragwright mcp", "pip install 'ragwright[mcp]'") from error
    caller = caller_of(principal)
    federation = FederationSettings.from_config(configuration)
    if federation.configured:
        with Federation.from_settings(
            federation, config=configuration, llm_settings=llm_settings
        ) as indexes:
            build_federation_server(indexes, caller=caller).run("stdio")
        return
    # A long-running server: the in-memory keyword cache pays off from the second query on.
    with Index(
        index,
        collection=collection,
        embedder=embedder,
        create=False,
        read_only=True,  # every tool reads
        llm_settings=llm_settings,
        config=configuration,
    ) as kb:
        build_server(kb, caller=caller).run("stdio")
