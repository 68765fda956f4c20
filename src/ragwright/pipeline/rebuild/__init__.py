"""Rebuilding a collection beside itself: another embedder (`reindex`) or chunking
(`rechunk`), swapped in one transaction (`reindexing`), or copied to another store
(`migrate`)."""
