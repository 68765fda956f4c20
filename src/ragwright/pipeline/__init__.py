"""The pipeline: ingest, query and answer, composed from ports."""
