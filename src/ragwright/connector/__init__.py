"""A ragwright index as a rag-connector ``RagPipeline`` (connector type ``ragwright``).

Registered under the ``rag_connector.connectors`` entry point group; needs the
``rag-connector`` package (``pip install 'ragwright[rag-connector]'``). See docs/rag-connector.md.
"""
