"""Search: a `SearchRequest` run in its mode over a collection's ports (see `searching`)."""
