"""Ingestion spread over a compute cluster (Ray): the driver plans, workers parse, chunk and
embed whole documents. Nothing here imports Ray until a run starts (the ``[ray]`` extra)."""
