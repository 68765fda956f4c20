"""The entity graph (GraphRAG): extraction, storage with per-chunk provenance, and graph search.

Every stored fact (a `Mention`, a `Relation`) belongs to exactly one chunk; entities and edges
are aggregates recomputed from that evidence, so a document's replace or delete takes its
facts out with its chunks. Graph search ranks *chunks* and is fused with hybrid search by rank.
"""
