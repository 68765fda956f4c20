"""The pipeline: the flows that compose the ports, one package each, none importing another's
way back (``scripts/import_layers.py`` checks it):

- `ingest`: discover → parse → chunk → embed → write.
- `search`: a `SearchRequest` run in its mode: process the query, retrieve, fuse, post-process.
- `answer`: the answer workflow over a search (engines are `ragwright.answers`').
- `graph`: build the entity graph and its communities, and show them.
- `sync`: keep a collection equal to its sources (folder watch, source syncs, their status).
- `rebuild`: re-index to another embedder or chunking, migrate between stores.

`permitted` (lookups as a caller may see them) serves every flow.
"""
