"""rag-connector dataset folders (spec ``rag-connector-dataset`` 1.0): write them from a folder
of files or from an index, and read them back into an index keeping their chunk ids and offsets.
Needs the ``rag-connector`` package (``pip install 'ragwright[rag-connector]'``)."""
