"""The workflow objects `Index` is a facade over, one module each: what a user reaches as
``kb.graph``, ``kb.communities``, ``kb.documents``, ``kb.sources``, ``kb.spaces``,
``kb.ingestion`` and ``kb.llms``. Each depends on the narrow store ports it uses and on
callables for what the index makes lazily (the embedder, LLM sessions), never on `Index`."""
