"""The ``ragwright`` connector's registration: parameters, connect and build."""

from __future__ import annotations

from typing import Any

from rag_connector.registry import ConnectorSpec

from ragwright.connector.pipeline import (
    ANSWER_ENGINES,
    CONNECTOR_TYPE,
    RagwrightAnsweringConnector,
    RagwrightConnector,
)
from ragwright.pipeline.search.modes import mode_names
from ragwright.pipeline.search.search_mode import SearchMode

_INFO = """\
# ragwright

Opens a ragwright index directory (built with `ragwright ingest` or `ragwright ingest
--dataset`) read-only. Chunk ids are ragwright's own content-addressed ids (or the ids of the
dataset the index was built from), stable across re-ingests of unchanged content.

- **index** (required): the index directory.
- **mode**: `vector` (default; cosine similarity, `scored`), `bm25` (BM25, `scored`) or
  `hybrid` (fused ranking, declared `ordered`: its scores are not thresholds).
- **embedder**: the embedder spec; defaults to the one the index was built with.
- **answer_engine**: set it to offer `generate`; without it the connector is retrieval-only.
  `extractive` needs no model; `stuff`, `map-reduce`, `refine` and `flare` use the `[llm]` table
  of the config file.
- **config**: the `ragwright.toml` holding the `[llm]` table (default: `RAGWRIGHT_CONFIG`, then
  `./ragwright.toml`).
"""


#: What `connect` accepts: the declared params, and ``type`` so a connection dict reconnects.
_PARAMS = frozenset({"index", "mode", "embedder", "answer_engine", "config", "type"})


def build(connection: dict[str, Any]) -> RagwrightConnector:
    """Reopen a connector from its persisted connection dict."""
    options: dict[str, Any] = {
        "mode": connection.get("mode") or SearchMode.VECTOR.value,
        "embedder": connection.get("embedder") or None,
    }
    engine = connection.get("answer_engine")
    if engine:
        return RagwrightAnsweringConnector(
            str(connection["index"]),
            answer_engine=engine,
            config=connection.get("config") or None,
            **options,
        )
    return RagwrightConnector(str(connection["index"]), **options)


def connect(params: dict[str, Any]) -> tuple[RagwrightConnector, dict[str, Any]]:
    unknown = sorted(set(params) - _PARAMS)
    if unknown:
        raise ValueError(f"unknown parameters {unknown}; this connector takes {sorted(_PARAMS)}")
    index = str(params.get("index") or "").strip()
    if not index:
        raise ValueError("'index' (the ragwright index directory) is required")
    mode = str(params.get("mode") or SearchMode.VECTOR.value)
    if mode not in mode_names():
        raise ValueError(f"mode must be one of {', '.join(mode_names())}; got {mode!r}")
    pipeline = build({**params, "index": index, "mode": mode})
    return pipeline, pipeline.connection()


def connector_spec() -> ConnectorSpec:
    """The spec, its mode choices read from the mode registry (plugins' included)."""
    return ConnectorSpec(
        connector_type=CONNECTOR_TYPE,
        label="ragwright index",
        description="A ragwright index directory (SQLite; BM25, vectors or hybrid), read-only.",
        build=build,
        connect=connect,
        connector_info=lambda: _INFO,
        params=[
            {"name": "index", "label": "Index directory", "type": "string", "required": True},
            {
                "name": "mode",
                "label": "Search mode",
                "type": "string",
                "required": False,
                "default": SearchMode.VECTOR.value,
                "choices": list(mode_names()),
            },
            {"name": "embedder", "label": "Embedder spec", "type": "string", "required": False},
            {
                "name": "answer_engine",
                "label": "Answer engine (enables generate)",
                "type": "string",
                "required": False,
                "choices": list(ANSWER_ENGINES),
            },
            {"name": "config", "label": "Config file ([llm])", "type": "string", "required": False},
        ],
    )


CONNECTOR_SPEC = connector_spec()
