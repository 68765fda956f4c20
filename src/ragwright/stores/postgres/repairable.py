"""The settings rows `ragwright repair` can restore on PostgreSQL, each with what a `check`
finding says of it. Data only, below the schema's reads (whose error for a broken row says
whether `repair` helps) and `check`; `setting_repair` holds how each is repaired."""

from __future__ import annotations

REPAIRS: dict[str, str] = {
    "embedding_space": "repair restores it from the recorded embedder",
    "chunking": "repair resets it to the default chunking",
    "parser_options": "repair resets it to the default options",
    "space_staged": "repair drops the staged space",
    "space_previous": "repair drops the previous space",
    "chunking_staged": "repair drops the staged chunking",
    "chunking_previous": "repair drops the previous chunking",
}
