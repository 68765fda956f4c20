"""Stores: where an index keeps documents, chunks and vectors."""
