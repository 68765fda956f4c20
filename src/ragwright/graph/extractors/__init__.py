"""Graph extractors: adapters at the `ragwright.ports.Extractor` port, registered in the
``ragwright.extractors`` entry-point group (``llm``: `ragwright.graph.extractors.llm`)."""
