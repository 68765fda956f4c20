"""ragwright inside other frameworks: a LangChain and a LlamaIndex retriever over an `Index`
or a `Federation` (extras ``langchain`` and ``llamaindex``). Each module imports its framework
when it is imported itself, so ``import ragwright`` never needs them."""
