"""Ingestion: discover the files, parse each under limits, chunk, embed in batches, write."""
