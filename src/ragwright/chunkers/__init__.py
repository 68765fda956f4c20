"""Chunkers: split a document into chunks that are exact slices of its content."""
